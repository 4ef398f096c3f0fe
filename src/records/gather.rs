//! The batched call: every record checked (src/records/check.rs), then each
//! column of the first `k` good records written, one column at a time:
//! fixed-width and boolean columns gathered straight into the writer's
//! buffers (src/records/direct.rs), utf8/binary ones into scratch (values,
//! offsets and validity; a null value is an empty span) and written through
//! the column path. The rows commit when the last column is written.

use arrow_array::make_array;
use arrow_buffer::{bit_util, Buffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, SchemaRef};

use super::check::{bad, check, is_null, read, rel_bytes};
use super::direct;
use super::types::{fits, Class, ColumnLayout, Encoding, NullMark, RecordsError};
use crate::error::{ErrorCode, QuiverError, Result};
use crate::ArrowWriter;

/// Where the records of a batch are.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    /// Record `i` at `base + i * stride`, `size` bytes each.
    Strided {
        base: *const u8,
        stride: usize,
        size: usize,
    },
    /// Record `i` at `ptrs[i]`, `sizes[i]` bytes (unknown: unbounded).
    Ptrs {
        ptrs: &'a [*const u8],
        sizes: Option<&'a [usize]>,
    },
    /// As `Ptrs`, sizes from C (a negative one bounds its record to nothing).
    PtrsC {
        ptrs: &'a [*const u8],
        sizes: &'a [i64],
    },
    Slices(&'a [&'a [u8]]),
}

impl Source<'_> {
    #[inline(always)]
    fn record(&self, i: usize) -> (*const u8, usize) {
        match *self {
            Source::Strided { base, stride, size } => (base.wrapping_add(i * stride), size),
            Source::Ptrs { ptrs, sizes } => (ptrs[i], sizes.map_or(usize::MAX, |s| s[i])),
            Source::PtrsC { ptrs, sizes } => (ptrs[i], usize::try_from(sizes[i]).unwrap_or(0)),
            Source::Slices(rows) => (rows[i].as_ptr(), rows[i].len()),
        }
    }
}

/// Runs `$body` with `$rec` bound to a closure `i -> (record pointer, size)`
/// specialised for the kind of `$src` (so the loops over records carry no
/// match per record).
macro_rules! with_records {
    ($src:expr, |$rec:ident| $body:expr) => {
        match $src {
            Source::Strided { base, stride, size } => {
                let $rec = move |i: usize| (base.wrapping_add(i * stride), size);
                $body
            }
            Source::Ptrs { ptrs, sizes: None } => {
                let $rec = move |i: usize| (ptrs[i], usize::MAX);
                $body
            }
            Source::Ptrs { ptrs, sizes: Some(sizes) } => {
                let $rec = move |i: usize| (ptrs[i], sizes[i]);
                $body
            }
            Source::PtrsC { ptrs, sizes } => {
                let $rec = move |i: usize| (ptrs[i], usize::try_from(sizes[i]).unwrap_or(0));
                $body
            }
            Source::Slices(rows) => {
                let $rec = move |i: usize| (rows[i].as_ptr(), rows[i].len());
                $body
            }
        }
    };
}

/// Reusable buffers of the batched calls.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    values: Vec<u8>,
    validity: Vec<u8>,
    offsets32: Vec<i32>,
    offsets64: Vec<i64>,
}

/// Writes records `0..n` of `src`; errors are named after `call`. The
/// records of `src` hold what their sizes say (unknown sizes: what the
/// layout reads), pointer values point to their lengths of bytes.
///
/// # Safety
/// As said: `src` describes readable records.
pub(crate) unsafe fn write(
    schema: &SchemaRef,
    columns: &[Option<ColumnLayout>],
    scratch: &mut Scratch,
    w: &mut ArrowWriter,
    call: &str,
    src: Source,
    n: usize,
) -> Result<usize, RecordsError> {
    let refuse = |error| Err(RecordsError { written: 0, error });
    if !fits(schema, &w.schema()) {
        return refuse(QuiverError::invalid(format!("{call}: the layout is for another schema")));
    }
    if let Some(c) = columns.iter().position(Option::is_none) {
        return refuse(QuiverError::invalid(format!("{call}: column {c} of the layout is not described")));
    }
    if columns.is_empty() {
        return refuse(QuiverError::invalid(format!("{call}: the schema has no columns")));
    }
    if w.row_pending() {
        return refuse(QuiverError::invalid(format!(
            "{call}: a row is half written through the row path: end it (or abort_row) first"
        )));
    }
    // The first bad record, and what is wrong with it.
    let min = columns.iter().flatten().map(ColumnLayout::end).max().unwrap_or(0);
    let mut k = n;
    let mut failure = None;
    if let Some(i) = (0..n).find(|&i| src.record(i).1 < min) {
        k = i;
        failure = Some(bad(
            ErrorCode::InvalidArgument,
            call,
            i,
            "size",
            format_args!("{} bytes, the layout needs {min}", src.record(i).1),
        ));
    }
    // Check every column over the good prefix; each check may shorten it.
    // UTF-8 is not checked here but over each utf8 column's gathered bytes
    // at once (`Scratch::write_column`); `failed_in` is the column of the
    // failure (None: the size check), which wins a tie at record `k` over
    // a later column only.
    let opts = w.options().clone();
    let check_opts = crate::WriterOptions { validate_utf8: false, ..opts.clone() };
    let mut failed_in = None;
    for (c, col) in columns.iter().enumerate() {
        let col = col.expect("described");
        let found = with_records!(src, |rec| check(&col, c, call, rec, k, &check_opts, schema));
        if let Some((i, e)) = found {
            k = i;
            failure = Some(e);
            failed_in = Some(c);
        }
    }
    let utf8_error = |c: usize, i: usize| {
        bad(ErrorCode::InvalidArgument, call, i, &format!("column {c} ({})", schema.field(c).name()), "invalid UTF-8")
    };
    let checks_utf8 = |col: &ColumnLayout| opts.validate_utf8 && matches!(col.class, Class::Var { utf8: true, .. });
    // A tie: record `k`, bad in a later column, is invalid UTF-8 in an
    // earlier one (whose check covered record `k`): the earlier one names it.
    if let Some(f) = failed_in.filter(|_| k < n) {
        for (c, col) in columns.iter().enumerate().take(f) {
            let col = col.expect("described");
            // SAFETY: record `k` passed column `c`'s checks (c < f).
            if checks_utf8(&col) && !unsafe { utf8_value(&col, src.record(k)) } {
                failure = Some(utf8_error(c, k));
                break;
            }
        }
    }
    'write: while k > 0 {
        for (c, col) in columns.iter().enumerate() {
            let col = col.expect("described");
            let node = w.top[c];
            let utf8 = checks_utf8(&col);
            let written = match col.class {
                Class::Var { .. } => {
                    with_records!(src, |rec| scratch.write_column(w, node, &col, rec, k, utf8))
                }
                _ => {
                    // SAFETY: the records hold what the layout reads (the
                    // size check above) and were checked good.
                    let r = with_records!(src, |rec| unsafe { direct::write_fixed(w, call, node, &col, rec, k) });
                    r.map(|()| None)
                }
            };
            match written {
                Ok(None) => {}
                Ok(Some(i)) => {
                    // Record `i` is invalid UTF-8 in column `c`: write the
                    // records before it again, without the columns written.
                    let _ = w.abort_row();
                    k = i;
                    failure = Some(utf8_error(c, i));
                    continue 'write;
                }
                Err(e) => {
                    // Not a record's fault (e.g. the batch's offsets are
                    // full): drop the columns written so far.
                    let _ = w.abort_row();
                    return Err(RecordsError { written: 0, error: e });
                }
            }
        }
        break;
    }
    match failure {
        None => Ok(n),
        Some(error) => Err(RecordsError { written: k, error }),
    }
}

impl Scratch {
    /// Gathers utf8/binary column `col` of records `0..k` (all good but for
    /// UTF-8) and writes it through the column path; with `utf8`, checks
    /// the values are UTF-8 first: `Ok(Some(i))`, nothing written, when
    /// record `i` is the first that is not.
    fn write_column(
        &mut self,
        w: &mut ArrowWriter,
        node: usize,
        col: &ColumnLayout,
        src: impl Fn(usize) -> (*const u8, usize),
        k: usize,
        utf8: bool,
    ) -> Result<Option<usize>> {
        let with_nulls = col.null != NullMark::Never;
        self.validity.clear();
        let mut nulls = 0;
        if with_nulls {
            self.validity.resize(k.div_ceil(8), 0);
            let mut valid_count = 0;
            for (byte_at, byte) in self.validity.iter_mut().enumerate() {
                let mut b = 0u8;
                for j in 0..(k - byte_at * 8).min(8) {
                    // SAFETY: the record holds `min_record_size` bytes.
                    let valid = !unsafe { is_null(src(byte_at * 8 + j).0, col.null) };
                    b |= (valid as u8) << j;
                }
                valid_count += b.count_ones() as usize;
                *byte = b;
            }
            nulls = k - valid_count;
        }
        let has_nulls = nulls > 0;
        let validity = has_nulls.then_some(&self.validity[..]);
        let valid = |i: usize| validity.is_none_or(|v| bit_util::get_bit(v, i));
        self.values.clear();
        match (col.class, col.encoding) {
            (Class::Var { large, utf8: is_utf8 }, encoding) => {
                let mut offsets32 = std::mem::take(&mut self.offsets32);
                let mut offsets64 = std::mem::take(&mut self.offsets64);
                offsets32.clear();
                offsets64.clear();
                if large {
                    offsets64.push(0);
                } else {
                    offsets32.push(0);
                }
                // Whether some value starts with a UTF-8 continuation byte.
                let mut split = false;
                for i in 0..k {
                    if valid(i) {
                        let (p, size) = src(i);
                        // SAFETY: checked good: inside the record, or the
                        // caller's pointer and length.
                        let v = unsafe { var_bytes(encoding, p, size) };
                        split |= v.first().is_some_and(|&b| (b as i8) < -64);
                        self.values.extend_from_slice(v);
                    }
                    // In range: `check` bounds a 32-bit column's total.
                    if large {
                        offsets64.push(self.values.len() as i64);
                    } else {
                        offsets32.push(self.values.len() as i32);
                    }
                }
                // Each value is UTF-8 exactly when their concatenation is
                // and none starts inside a character (with a continuation
                // byte): one check over the gathered bytes, and only on a
                // failure one per value to find the first bad record.
                if utf8 && (split || std::str::from_utf8(&self.values).is_err()) {
                    let end = |i: usize| if large { offsets64[i] as usize } else { offsets32[i] as usize };
                    let bad = (0..k).find(|&i| std::str::from_utf8(&self.values[end(i)..end(i + 1)]).is_err());
                    self.offsets32 = offsets32;
                    self.offsets64 = offsets64;
                    return Ok(Some(bad.expect("a value that is not UTF-8")));
                }
                let values = Buffer::from_vec(std::mem::take(&mut self.values));
                let offsets = if large { Buffer::from_vec(offsets64) } else { Buffer::from_vec(offsets32) };
                let nulls = has_nulls.then(|| Buffer::from_vec(std::mem::take(&mut self.validity)));
                let data_type = match (large, is_utf8) {
                    (false, true) => DataType::Utf8,
                    (true, true) => DataType::LargeUtf8,
                    (false, false) => DataType::Binary,
                    (true, false) => DataType::LargeBinary,
                };
                let builder = ArrayData::builder(data_type)
                    .len(k)
                    .add_buffer(offsets.clone())
                    .add_buffer(values.clone())
                    .null_bit_buffer(nulls.clone());
                // SAFETY: offsets are k + 1 increasing values within `values`;
                // UTF-8 was checked when the writer checks it.
                let data = unsafe { builder.build_unchecked() };
                let result = w.write_array(node, &make_array(data));
                if let Some(n) = nulls {
                    self.validity = n.into_vec().unwrap_or_default();
                }
                self.values = values.into_vec().unwrap_or_default();
                if large {
                    self.offsets64 = offsets.into_vec().unwrap_or_default();
                } else {
                    self.offsets32 = offsets.into_vec().unwrap_or_default();
                }
                result.map(|()| None)
            }
            (Class::Bool | Class::Fixed { .. }, _) => unreachable!("gathered by direct::write_fixed"),
        }
    }
}

/// The bytes of a var-width value of a good record.
///
/// # Safety
/// The record was checked good (see `check`).
unsafe fn var_bytes<'a>(encoding: Encoding, p: *const u8, size: usize) -> &'a [u8] {
    // SAFETY: per the contract.
    unsafe {
        match encoding {
            Encoding::PtrLen { ptr_at, len_at } => {
                let ptr = usize::from_le_bytes(read::<8>(p, ptr_at)) as *const u8;
                let len = u64::from_le_bytes(read(p, len_at)) as usize;
                if len == 0 {
                    &[]
                } else {
                    std::slice::from_raw_parts(ptr, len)
                }
            }
            Encoding::RelLen { offset_at, len_at } => rel_bytes(p, size, offset_at, len_at).unwrap_or(&[]),
            _ => unreachable!("var encodings"),
        }
    }
}

/// Whether record `r`'s value in utf8 column `col` is UTF-8 (a null is).
///
/// # Safety
/// The record passed the column's checks (but UTF-8).
unsafe fn utf8_value(col: &ColumnLayout, r: (*const u8, usize)) -> bool {
    // SAFETY: per the contract.
    unsafe { is_null(r.0, col.null) || std::str::from_utf8(var_bytes(col.encoding, r.0, r.1)).is_ok() }
}
