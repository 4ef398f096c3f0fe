//! Row masks by validity byte (the column path's branch-free masking of
//! values and lengths under nulls) and counting the bits set in a bitmap.

/// Row masks by validity byte: `lut[b][k]` is all ones when bit `k` of `b`
/// is set, else zero.
const fn row_masks<T: Copy>(ones: T, zero: T) -> [[T; 8]; 256] {
    let mut t = [[zero; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 8 {
            if (b >> k) & 1 == 1 {
                t[b][k] = ones;
            }
            k += 1;
        }
        b += 1;
    }
    t
}

pub(crate) static MASK8: [[u8; 8]; 256] = row_masks(u8::MAX, 0);

pub(crate) static MASK16: [[u16; 8]; 256] = row_masks(u16::MAX, 0);

pub(crate) static MASK32: [[u32; 8]; 256] = row_masks(u32::MAX, 0);

pub(crate) static MASK64: [[u64; 8]; 256] = row_masks(u64::MAX, 0);

/// The number of bits set in `bytes`: a word at a time, with the POPCNT
/// instruction where the CPU has it (checked at run time; plain x86_64 has
/// no such instruction and counts with shifts and masks).
pub(crate) fn count_ones(bytes: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT, checked just above.
        return unsafe { count_ones_popcnt(bytes) };
    }
    count_ones_in(bytes)
}

/// [`count_ones_in`] compiled with POPCNT.
///
/// # Safety
///
/// The CPU has POPCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn count_ones_popcnt(bytes: &[u8]) -> usize {
    count_ones_in(bytes)
}

#[inline(always)]
fn count_ones_in(bytes: &[u8]) -> usize {
    let words = bytes.chunks_exact(8);
    let rest: usize = words.remainder().iter().map(|b| b.count_ones() as usize).sum();
    words.map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")).count_ones() as usize).sum::<usize>() + rest
}

#[cfg(test)]
pub(crate) mod tests {
    /// xorshift64*: the same bytes on every run.
    pub(crate) fn gen(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
    }

    /// Validity bitmaps of `bits` bits: none null, all null, half random,
    /// runs of 1 to 150 rows, and only the first or only the last row null.
    pub(crate) fn patterns(bits: usize) -> Vec<(&'static str, Vec<u8>)> {
        let bytes = bits.div_ceil(8) + 1;
        let from = |f: &dyn Fn(usize) -> bool| {
            let mut b = vec![0u8; bytes];
            for i in 0..bits {
                if f(i) {
                    b[i / 8] |= 1 << (i % 8);
                }
            }
            b
        };
        let mut r = gen(7);
        let random: Vec<bool> = (0..bits).map(|_| r() >> 63 == 0).collect();
        let mut runs = Vec::new();
        let mut valid = true;
        while runs.len() < bits {
            let n = 1 + (r() % 150) as usize;
            runs.extend(std::iter::repeat_n(valid, n));
            valid = !valid;
        }
        vec![
            ("none", from(&|_| true)),
            ("all", from(&|_| false)),
            ("half", from(&|i| random[i])),
            ("runs", from(&|i| runs[i])),
            ("first", from(&|i| i != 0)),
            ("last", from(&|i| i + 1 != bits)),
        ]
    }
}
