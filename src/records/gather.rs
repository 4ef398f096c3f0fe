//! The batched call: every record checked (src/records/check.rs), then each
//! column of the first `k` good records gathered straight into the
//! writer's buffers (src/records/direct.rs; a null utf8/binary value is an
//! empty span), one column at a time, or, when every column is native fixed
//! width, all of them a tile of records at a time (`direct::write_fixed_columns`).
//! The rows commit when the last column is written.

use arrow_schema::SchemaRef;

use super::check::{bad, check, is_null, var_bytes};
use super::direct;
use super::lanes;
use super::types::{fits, Class, ColumnLayout, Encoding, RecordsError};
use crate::error::{ErrorCode, QuiverError, Result};
use crate::writer::in_place::MAX_IN_PLACE_COLUMNS;
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

/// Writes records `0..n` of `src`; errors are named after `call`. The
/// records of `src` hold what their sizes say (unknown sizes: what the
/// layout reads), pointer values point to their lengths of bytes.
///
/// # Safety
/// As said: `src` describes readable records.
pub(crate) unsafe fn write(
    schema: &SchemaRef,
    columns: &[Option<ColumnLayout>],
    marks: &mut Vec<(usize, Vec<u8>)>,
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
    // at once (`direct::write_var`); `failed_in` is the column of the
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
    // Every column native fixed-width: all of them in one pass over the
    // records, a tile at a time (unless the writer leaves it to the gather
    // column by column below).
    let fused = columns.iter().flatten().all(direct::fusable) && columns.len() <= MAX_IN_PLACE_COLUMNS;
    if fused && k > 0 {
        let mut nodes = [0usize; MAX_IN_PLACE_COLUMNS];
        nodes[..columns.len()].copy_from_slice(&w.top[..columns.len()]);
        // SAFETY: the records hold what the layout reads (the size check
        // above) and were checked good.
        let done = with_records!(src, |rec| unsafe {
            direct::write_fixed_columns(w, call, &nodes[..columns.len()], columns, rec, k, marks)
        });
        match done {
            Ok(true) => {
                return match failure {
                    None => Ok(n),
                    Some(error) => Err(RecordsError { written: k, error }),
                }
            }
            Ok(false) => {}
            Err(e) => return Err(RecordsError { written: 0, error: e }),
        }
    }
    // The null-mark bytes of the good records, gathered once for each byte
    // of the record that nullable fixed-width columns mark their nulls in;
    // `marks` keeps its buffers from call to call, its first `used` entries
    // are this call's.
    let fixed = |col: &&ColumnLayout| {
        col.nullable && matches!((col.class, col.encoding), (Class::Fixed { .. }, Encoding::Fixed { .. }))
    };
    let used = lanes::mark_bytes(columns.iter().flatten().filter(fixed), marks);
    for (at, bytes) in &mut marks[..used] {
        // SAFETY: the good records hold the mark's byte (the size check).
        with_records!(src, |rec| unsafe { lanes::gather_marks(rec, k, *at, bytes) });
    }
    let marks = &marks[..used];
    let marks_of = |col: &ColumnLayout| lanes::marks_for(marks, col.null);
    'write: while k > 0 {
        for (c, col) in columns.iter().enumerate() {
            let col = col.expect("described");
            let node = w.top[c];
            let utf8 = checks_utf8(&col);
            let written = match col.class {
                Class::Var { .. } => {
                    // SAFETY: as below, and pointer values were checked.
                    with_records!(src, |rec| unsafe { direct::write_var(w, call, node, &col, rec, k, utf8) })
                }
                _ => {
                    // The mark bytes of the first `k` records (a prefix of
                    // those gathered: `k` only shrinks).
                    let m = marks_of(&col).map(|m| &m[..k]);
                    // SAFETY: the records hold what the layout reads (the
                    // size check above) and were checked good.
                    let r = with_records!(src, |rec| unsafe { direct::write_fixed(w, call, node, &col, rec, k, m) });
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

/// Whether record `r`'s value in utf8 column `col` is UTF-8 (a null is).
///
/// # Safety
/// The record passed the column's checks (but UTF-8).
unsafe fn utf8_value(col: &ColumnLayout, r: (*const u8, usize)) -> bool {
    // SAFETY: per the contract.
    unsafe { is_null(r.0, col.null) || std::str::from_utf8(var_bytes(col.encoding, r.0, r.1)).is_ok() }
}
