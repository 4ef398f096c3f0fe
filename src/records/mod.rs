//! Row-major records in one call per batch (docs/records.md): a
//! [`RecordLayout`] says, for each top-level column, where its value sits in
//! a record, how its null is marked and how the value is encoded; one call
//! then writes N records into the columns as committed rows.
//!
//! The call works column by column: each column's values and validity are
//! gathered from the records straight into the column's own buffers
//! (src/records/direct.rs); columns that are all native fixed width are
//! gathered together, a tile of records at a time.

use arrow_schema::SchemaRef;

use crate::error::{ErrorCode, QuiverError, Result};

mod check;
mod direct;
pub(crate) mod gather;
mod lanes;
mod types;

use types::{Class, ColumnLayout};
pub use types::{Encoding, NullMark, RecordsError};

/// Where every top-level column of a schema sits in a row-major record;
/// described once, used for every batch. A batched call writes straight
/// into the writer's buffers: it allocates nothing beyond their growth and
/// the layout's own scratch (one byte per record for each byte of a record
/// that marks nulls of fixed-width columns), kept from call to call.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::Array;
/// use quiver::{parse_schema, ArrowWriter, Encoding, NullMark, RecordLayout, WriterOptions};
///
/// let schema = Arc::new(parse_schema("id: int32, score: float64").unwrap());
/// let mut w = ArrowWriter::create(schema.clone(), WriterOptions::default()).unwrap();
/// // 16-byte records: id at 0, a null flag byte for it at 4, score at 8.
/// let mut layout = RecordLayout::new(schema);
/// layout.set(0, Encoding::Fixed { at: 0 }, NullMark::Byte { at: 4 }).unwrap();
/// layout.set(1, Encoding::Fixed { at: 8 }, NullMark::Never).unwrap();
/// let mut records = vec![0u8; 3 * 16];
/// for (i, r) in records.chunks_exact_mut(16).enumerate() {
///     r[0..4].copy_from_slice(&(i as i32).to_le_bytes());
///     r[4] = (i == 1) as u8;
///     r[8..16].copy_from_slice(&(i as f64 / 2.0).to_le_bytes());
/// }
/// assert_eq!(layout.write_records(&mut w, &records, 16), Ok(3));
/// let batch = w.finish().unwrap();
/// assert_eq!((batch.num_rows(), batch.column(0).null_count()), (3, 1));
/// ```
#[derive(Debug)]
pub struct RecordLayout {
    schema: SchemaRef,
    columns: Vec<Option<ColumnLayout>>,
    /// The null-mark bytes of the records of the last call, one buffer per
    /// byte offset of a record that marks nulls (see `gather::write`): kept
    /// so that a call allocates nothing once the buffers have grown.
    marks: Vec<(usize, Vec<u8>)>,
}

impl RecordLayout {
    /// Writes records `0..n` of `src` (see `gather::write`).
    ///
    /// # Safety
    /// `src` describes readable records, as `gather::write` says.
    pub(crate) unsafe fn write(
        &mut self,
        w: &mut crate::ArrowWriter,
        call: &str,
        src: gather::Source,
        n: usize,
    ) -> Result<usize, RecordsError> {
        // SAFETY: per the contract.
        unsafe { gather::write(&self.schema, &self.columns, &mut self.marks, w, call, src, n) }
    }

    /// A layout for the top-level columns of `schema`, none described yet:
    /// describe each with [`RecordLayout::set`] before writing.
    pub fn new(schema: SchemaRef) -> RecordLayout {
        let columns = vec![None; schema.fields().len()];
        RecordLayout { schema, columns, marks: Vec::new() }
    }

    /// The schema whose top-level columns this layout describes.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Describes top-level column `column` (schema order): its value
    /// `encoding` and its `null` mark. EINVAL for an unknown column or an
    /// encoding the column's type does not take; ENOSYS for a column type
    /// records do not cover (nested, dictionary, view and null types).
    pub fn set(&mut self, column: usize, encoding: Encoding, null: NullMark) -> Result<()> {
        const CALL: &str = "RecordLayout::set";
        let Some(field) = self.schema.fields().get(column) else {
            return Err(QuiverError::invalid(format!(
                "{CALL}: no column {column} (the schema has {})",
                self.schema.fields().len()
            )));
        };
        let what = format!("{CALL}: column {column} ({}: {})", field.name(), field.data_type());
        let Some(class) = Class::of(field.data_type()) else {
            return Err(QuiverError::new(ErrorCode::Unsupported, format!("{what}: records do not cover this type")));
        };
        let ok = match (encoding, class) {
            (Encoding::Fixed { .. }, Class::Bool | Class::Fixed { .. }) => true,
            (Encoding::Int { width, .. }, Class::Fixed { width: w, precision: Some(_) }) => {
                matches!(width, 1 | 2 | 4 | 8 | 16) && width <= w
            }
            (Encoding::PtrLen { .. } | Encoding::RelLen { .. }, Class::Var { .. }) => true,
            (Encoding::BigEndian { .. }, Class::Fixed { precision: Some(_), .. }) => true,
            _ => false,
        };
        if !ok {
            return Err(QuiverError::invalid(format!("{what}: cannot take the encoding {encoding:?}")));
        }
        self.columns[column] = Some(ColumnLayout { class, nullable: field.is_nullable(), encoding, null });
        Ok(())
    }

    /// The preset for Spark's UnsafeRow over `schema`: the null bitset
    /// (`((n + 63) / 64) * 8` bytes, bit `i` for field `i`), then one 8-byte
    /// slot per field. Fixed-width values of up to 8 bytes sit in the low
    /// bytes of their slot (boolean one byte); utf8/binary values are
    /// `offset << 32 | size` in the slot, the offset from the row's start;
    /// decimals of precision <= 18 are the unscaled long in the slot, larger
    /// ones big-endian two's-complement bytes at offset/size. ENOSYS for a
    /// column type UnsafeRow does not carry this way (wider fixed-width types
    /// other than decimals, nested types).
    pub fn unsafe_row(schema: SchemaRef) -> Result<RecordLayout> {
        let n = schema.fields().len();
        let bitset = n.div_ceil(64) * 8;
        let mut layout = RecordLayout::new(schema.clone());
        for (i, field) in schema.fields().iter().enumerate() {
            let slot = bitset + 8 * i;
            let null = NullMark::Bit { at: 0, bit: i };
            let encoding = match Class::of(field.data_type()) {
                Some(Class::Var { .. }) => Encoding::RelLen { offset_at: slot + 4, len_at: slot },
                Some(Class::Fixed { precision: Some(p), width }) if p <= 18 => {
                    if width >= 8 {
                        Encoding::Int { at: slot, width: 8 }
                    } else {
                        Encoding::Fixed { at: slot }
                    }
                }
                Some(Class::Fixed { precision: Some(_), .. }) => {
                    Encoding::BigEndian { offset_at: slot + 4, len_at: slot }
                }
                Some(Class::Fixed { width, .. }) if width <= 8 => Encoding::Fixed { at: slot },
                Some(Class::Bool) => Encoding::Fixed { at: slot },
                _ => {
                    return Err(QuiverError::new(
                        ErrorCode::Unsupported,
                        format!(
                            "RecordLayout::unsafe_row: column {i} ({}: {}): not carried by the UnsafeRow preset",
                            field.name(),
                            field.data_type()
                        ),
                    ))
                }
            };
            layout.set(i, encoding, null)?;
        }
        Ok(layout)
    }

    /// Bytes a record must have to hold every value and null mark of the
    /// layout at its fixed offsets.
    pub fn min_record_size(&self) -> usize {
        self.columns.iter().flatten().map(ColumnLayout::end).max().unwrap_or(0)
    }

    /// Whether some column reads a pointer from the records
    /// ([`Encoding::PtrLen`]): such layouts only take the unsafe calls.
    pub fn reads_pointers(&self) -> bool {
        self.columns.iter().flatten().any(|c| matches!(c.encoding, Encoding::PtrLen { .. }))
    }

    fn check_safe(&self, call: &str) -> Result<(), RecordsError> {
        if self.reads_pointers() {
            return Err(RecordsError {
                written: 0,
                error: QuiverError::invalid(format!(
                    "{call}: the layout reads pointers from the records: use write_records_raw or write_record_ptrs"
                )),
            });
        }
        Ok(())
    }

    /// Writes the records of `bytes`, one every `stride` bytes
    /// (`bytes.len()` a multiple of `stride`, `stride >= min_record_size`),
    /// as committed rows of `w`. Returns the number written (all of them);
    /// on a bad record, a [`RecordsError`] with the records before it
    /// committed. EINVAL (nothing written) when a row is half written
    /// through the row path, or the layout does not fit `w`.
    pub fn write_records(
        &mut self,
        w: &mut crate::ArrowWriter,
        bytes: &[u8],
        stride: usize,
    ) -> Result<usize, RecordsError> {
        const CALL: &str = "write_records";
        self.check_safe(CALL)?;
        if stride == 0 || !bytes.len().is_multiple_of(stride) {
            return Err(RecordsError {
                written: 0,
                error: QuiverError::invalid(format!(
                    "{CALL}: {} bytes are not a whole number of {stride}-byte records",
                    bytes.len()
                )),
            });
        }
        let source = gather::Source::Strided { base: bytes.as_ptr(), stride, size: stride };
        // SAFETY: the records are slices of `bytes`, of `stride` bytes each;
        // the layout reads no pointers.
        unsafe { self.write(w, CALL, source, bytes.len() / stride) }
    }

    /// Writes each of `rows` (one record each, of its own size) as a
    /// committed row of `w`; as [`RecordLayout::write_records`].
    /// [`Encoding::RelLen`] and [`Encoding::BigEndian`] values must lie
    /// inside their record.
    pub fn write_rows(&mut self, w: &mut crate::ArrowWriter, rows: &[&[u8]]) -> Result<usize, RecordsError> {
        const CALL: &str = "write_rows";
        self.check_safe(CALL)?;
        // SAFETY: each record is a slice, its size known; no pointers read.
        unsafe { self.write(w, CALL, gather::Source::Slices(rows), rows.len()) }
    }

    /// Writes `n` records at `base`, one every `stride` bytes; as
    /// [`RecordLayout::write_records`].
    ///
    /// # Safety
    /// `base` points to `n * stride` readable bytes; every pointer a
    /// [`Encoding::PtrLen`] value holds (unless its length is 0) points to
    /// that many readable bytes.
    pub unsafe fn write_records_raw(
        &mut self,
        w: &mut crate::ArrowWriter,
        base: *const u8,
        stride: usize,
        n: usize,
    ) -> Result<usize, RecordsError> {
        // SAFETY: per the contract.
        unsafe { self.write(w, "write_records", gather::Source::Strided { base, stride, size: stride }, n) }
    }

    /// Writes the records `ptrs` point at; `sizes` (if given, one per
    /// record) bounds each record: a record shorter than
    /// [`RecordLayout::min_record_size`], or an offset/length value outside
    /// its record, is a bad record. As [`RecordLayout::write_records`].
    ///
    /// # Safety
    /// Each pointer points to a record of `sizes[i]` readable bytes (without
    /// `sizes`: [`RecordLayout::min_record_size`] bytes and every
    /// offset/length value inside the record); pointers of
    /// [`Encoding::PtrLen`] values as in [`RecordLayout::write_records_raw`].
    pub unsafe fn write_record_ptrs(
        &mut self,
        w: &mut crate::ArrowWriter,
        ptrs: &[*const u8],
        sizes: Option<&[usize]>,
    ) -> Result<usize, RecordsError> {
        const CALL: &str = "write_record_ptrs";
        if let Some(s) = sizes {
            if s.len() != ptrs.len() {
                return Err(RecordsError {
                    written: 0,
                    error: QuiverError::invalid(format!("{CALL}: {} pointers but {} sizes", ptrs.len(), s.len())),
                });
            }
        }
        // SAFETY: per the contract.
        unsafe { self.write(w, CALL, gather::Source::Ptrs { ptrs, sizes }, ptrs.len()) }
    }
}
