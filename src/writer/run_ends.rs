//! The run ends of the run-end column path's whole-run copy (see
//! `encoded_copy`): read from the input as rows, tested for the runs that
//! may be taken whole, and written out rebased.

/// The most runs `copy_fixed_runs` takes at once.
pub(super) const RUNS_AT_ONCE: usize = 256;

/// Run ends `first..first + count` of `bytes` (`width`-byte signed
/// integers) as rows, replacing what `out` held: as many as the buffer
/// holds; a negative end reads as a row past any array.
pub(super) fn read_ends(bytes: &[u8], width: usize, first: usize, count: usize, out: &mut Vec<usize>) {
    let part = bytes.get(first * width..).unwrap_or_default();
    let part = &part[..count.min(part.len() / width) * width];
    out.clear();
    match width {
        2 => out.extend(part.chunks_exact(2).map(|c| i16::from_le_bytes([c[0], c[1]]) as usize)),
        4 => out.extend(part.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")) as usize)),
        _ => out.extend(part.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")) as usize)),
    }
}

/// How many of `ends` (rows, in order) increase from `at` on and stay at
/// or below `limit`: the runs from `at` that may be taken whole.
pub(super) fn increasing_prefix(ends: &[usize], at: usize, limit: usize) -> usize {
    // Eight ends tested at a time without a branch each; the block with a
    // failing end is then searched one by one.
    let mut end = at;
    let mut i = 0;
    while i + 8 <= ends.len() {
        let b: &[usize; 8] = ends[i..i + 8].try_into().expect("8 ends");
        let mut bad = (b[0] <= end) | (b[0] > limit);
        for j in 1..8 {
            bad |= (b[j] <= b[j - 1]) | (b[j] > limit);
        }
        if bad {
            break;
        }
        end = b[7];
        i += 8;
    }
    for (r, &e) in ends[i..].iter().enumerate() {
        if e <= end || e > limit {
            return i + r;
        }
        end = e;
    }
    ends.len()
}

/// Appends `ends` (at most `RUNS_AT_ONCE`) to run ends `run_ends` of
/// `width` bytes, written straight into the buffer's reserved capacity.
pub(super) fn push_ends(run_ends: &mut crate::buffer::Slot, width: usize, ends: impl ExactSizeIterator<Item = usize>) {
    let n = ends.len().min(RUNS_AT_ONCE);
    let buf = &mut run_ends.buf;
    let old = buf.len();
    buf.reserve(n * width);
    // SAFETY: `reserve` made `n * width` bytes after `old` writable; each of
    // the `n` ends taken writes its `width` bytes (unaligned), every index
    // below `n`, before `set_len` makes them part of the buffer.
    unsafe {
        let dst = buf.as_mut_ptr().add(old);
        match width {
            2 => {
                ends.take(n).enumerate().for_each(|(i, e)| dst.cast::<u16>().add(i).write_unaligned((e as u16).to_le()))
            }
            4 => {
                ends.take(n).enumerate().for_each(|(i, e)| dst.cast::<u32>().add(i).write_unaligned((e as u32).to_le()))
            }
            _ => {
                ends.take(n).enumerate().for_each(|(i, e)| dst.cast::<u64>().add(i).write_unaligned((e as u64).to_le()))
            }
        }
        buf.set_len(old + n * width);
    }
}

#[cfg(test)]
mod tests {
    use crate::writer::run_ends::increasing_prefix;

    /// `increasing_prefix` one end at a time, as the definition reads.
    fn one_by_one(ends: &[usize], at: usize, limit: usize) -> usize {
        let mut end = at;
        ends.iter()
            .position(|&e| {
                let bad = e <= end || e > limit;
                end = e;
                bad
            })
            .unwrap_or(ends.len())
    }

    #[test]
    fn increasing_prefix_matches_end_by_end() {
        for n in 0..=40usize {
            let ends: Vec<usize> = (1..=n).map(|i| 10 + 3 * i).collect();
            for limit in [usize::MAX, 10 + 3 * n, 10 + 3 * (n / 2), 9] {
                assert_eq!(
                    increasing_prefix(&ends, 10, limit),
                    one_by_one(&ends, 10, limit),
                    "{n} ends, limit {limit}"
                );
            }
            // Each end in turn not above the one before it (equal, lower, a
            // negative end read as a huge row), or not above `at`.
            for bad in 0..n {
                for value in [ends[bad] - 3, ends[bad] - 4, 10, 0, usize::MAX] {
                    let mut e = ends.clone();
                    e[bad] = value;
                    for limit in [usize::MAX, 10 + 3 * n] {
                        let want = one_by_one(&e, 10, limit);
                        assert!(want <= bad || value == usize::MAX && limit == usize::MAX);
                        assert_eq!(
                            increasing_prefix(&e, 10, limit),
                            want,
                            "{n} ends, end {bad} = {value}, limit {limit}"
                        );
                    }
                }
            }
        }
    }
}
