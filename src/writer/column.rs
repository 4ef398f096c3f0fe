//! The column path's entry points: bulk copies of whole top-level columns
//! from native slices or from any arrow array, checked before anything is
//! written and rolled back as a whole on failure, and the recursive copy of
//! an array's logical rows into a node and its children.

use arrow_array::Array;
use arrow_buffer::ArrowNativeType;
use arrow_data::ArrayData;

use crate::buffer::bits::{for_each_run, Bits};
use crate::error::{QuiverError, Result};
use crate::node::Kind;

use super::ArrowWriter;

impl ArrowWriter {
    /// Checks that `node` is a top-level column the column path may write now.
    pub(super) fn column_target(&mut self, node: usize, call: &str) -> Result<()> {
        self.ensure_started();
        let Some(n) = self.nodes.get(node) else {
            return Err(self.unknown_node(call, node));
        };
        if n.parent.is_some() {
            return Err(QuiverError::invalid(format!("{call}: {} is not a top-level column", n.describe(node))));
        }
        if let Some(&o) = self.open.last() {
            return Err(QuiverError::invalid(format!(
                "{call}: {} is open: end it (or abort_row) first",
                self.nodes[o].describe(o)
            )));
        }
        Ok(())
    }

    /// Runs one column write; on failure the column is cut back to where it
    /// was, so nothing else changes. When every top-level column then has the
    /// same length, those rows are committed.
    pub(super) fn column_write(&mut self, node: usize, write: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let (mut subtree, mut before, mut lazy) = std::mem::take(&mut self.column_scratch);
        crate::node::build::subtree_into(&self.nodes, node, &mut subtree);
        before.clear();
        before.extend(subtree.iter().map(|&i| (self.nodes[i].len, self.nodes[i].null_count)));
        // The nodes whose bitmap is still deferred (lazy validity): a refused
        // write that took one gives it back.
        lazy.clear();
        lazy.extend(subtree.iter().copied().filter(|&i| self.nodes[i].valid_lazy && self.nodes[i].validity.is_some()));
        self.refused_at = None;
        let written = write(self);
        if written.is_err() {
            self.rollback_nodes(&subtree, &before);
            for &i in &lazy {
                let n = &mut self.nodes[i];
                if let (false, Some(v)) = (n.valid_lazy, &mut n.validity) {
                    v.unstart(&mut self.counters);
                    n.valid_lazy = true;
                }
            }
        }
        self.column_scratch = (subtree, before, lazy);
        if let Err(e) = written {
            // A nested value was refused: name the input row that holds it.
            return Err(match self.refused_at.take() {
                Some(row) => QuiverError::new(e.code(), format!("{} in input row {row}", e.message())),
                None => e,
            });
        }
        self.commit_even_columns();
        Ok(())
    }

    /// The column path's commit rule: when every top-level column has the
    /// same length, past the committed rows, those rows are committed.
    pub(super) fn commit_even_columns(&mut self) {
        let len = self.nodes[self.top[0]].len;
        if len > self.rows && self.top.iter().all(|&c| self.nodes[c].len == len) {
            self.rows = len;
            self.commit();
        }
    }

    /// Bytes of values `length` rows of a fixed-width (or boolean) top-level
    /// column take in the column path.
    pub fn column_value_bytes(&self, node: usize, length: usize, call: &str) -> Result<usize> {
        let Some(n) = self.nodes.get(node) else {
            return Err(self.unknown_node(call, node));
        };
        match n.kind() {
            Kind::Fixed { width } => length.checked_mul(width).filter(|&b| b <= isize::MAX as usize).ok_or_else(|| {
                QuiverError::invalid(format!(
                    "{call}: {}: {length} rows of {width} bytes do not fit in memory",
                    n.describe(node)
                ))
            }),
            Kind::Bool => Ok(length.div_ceil(8)),
            _ => Err(QuiverError::invalid(format!(
                "{call}: {} is not a fixed-width column: use write_array",
                n.describe(node)
            ))),
        }
    }

    /// Appends a whole column of a fixed-width type from a native slice.
    /// `validity` is an LSB-first bitmap of `values.len()` bits (`None`: all
    /// valid). Null slots get zero values whatever `values` holds there. The
    /// rows count once every top-level column has them.
    ///
    /// ```
    /// # use quiver::{ArrowWriter, WriterOptions};
    /// let mut w = ArrowWriter::from_text("a: int64, b: float64 not null", WriterOptions::default())?;
    /// w.write_column::<i64>(0, &[10, 99, 30], Some(&[0b101]))?; // row 1 is null
    /// w.write_column::<f64>(1, &[0.5, 1.5, 2.5], None)?;
    /// let batch = w.finish()?;
    /// assert_eq!((batch.num_rows(), batch.column(0).null_count()), (3, 1));
    /// # Ok::<(), quiver::QuiverError>(())
    /// ```
    pub fn write_column<T: ArrowNativeType>(
        &mut self,
        node: usize,
        values: &[T],
        validity: Option<&[u8]>,
    ) -> Result<()> {
        let bytes: &[u8] = arrow_buffer::ToByteSlice::to_byte_slice(values);
        if let Some(Kind::Fixed { width }) = self.nodes.get(node).map(|n| n.kind()) {
            if width != std::mem::size_of::<T>() {
                return Err(QuiverError::invalid(format!(
                    "write_column: {} has {width}-byte values, the slice has {}-byte values",
                    self.nodes[node].describe(node),
                    std::mem::size_of::<T>()
                )));
            }
        }
        self.write_column_bytes(node, bytes, validity, values.len())
    }

    /// Appends `length` rows to a top-level fixed-width or boolean column
    /// from raw little-endian bytes (`length * width` bytes; for boolean an
    /// LSB-first bitmap of `length` bits).
    pub fn write_column_bytes(
        &mut self,
        node: usize,
        values: &[u8],
        validity: Option<&[u8]>,
        length: usize,
    ) -> Result<()> {
        const CALL: &str = "write_column";
        self.column_target(node, CALL)?;
        let need = self.column_value_bytes(node, length, CALL)?;
        let n = &self.nodes[node];
        if values.len() < need {
            return Err(QuiverError::invalid(format!(
                "{CALL}: {}: {length} rows need {need} bytes of values, got {}",
                n.describe(node),
                values.len()
            )));
        }
        if let Some(v) = validity {
            if v.len() < length.div_ceil(8) {
                return Err(QuiverError::invalid(format!(
                    "{CALL}: {}: {length} rows need {} bytes of validity, got {}",
                    n.describe(node),
                    length.div_ceil(8),
                    v.len()
                )));
            }
        }
        self.check_column(CALL, node, need, length)?;
        let bits = validity.map(|bytes| Bits { bytes, offset: 0 });
        self.column_write(node, |w| w.copy_fixed(node, CALL, values, 0, bits, length))
    }

    /// Appends a whole top-level column copied from `array` (any arrow array
    /// of the column's type, sliced ones included). Null slots get zeros.
    ///
    /// ```
    /// # use quiver::{ArrowWriter, WriterOptions};
    /// use arrow_array::{Array, Int32Array, StringArray};
    /// let mut w = ArrowWriter::from_text("n: int32, s: utf8", WriterOptions::default())?;
    /// w.write_array(0, &Int32Array::from(vec![Some(1), None, Some(3)]))?;
    /// w.write_array(1, &StringArray::from(vec!["x", "y", "z", "w"]).slice(1, 3))?;
    /// assert_eq!(w.finish()?.num_rows(), 3);
    /// # Ok::<(), quiver::QuiverError>(())
    /// ```
    pub fn write_array(&mut self, node: usize, array: &dyn Array) -> Result<()> {
        crate::depth::check_data_type(array.data_type(), "write_array")?;
        self.write_array_data(node, &array.to_data())
    }

    pub(crate) fn write_array_data(&mut self, node: usize, data: &ArrayData) -> Result<()> {
        const CALL: &str = "write_array";
        self.column_target(node, CALL)?;
        let n = &self.nodes[node];
        if !n.field.data_type().equals_datatype(data.data_type()) {
            return Err(QuiverError::invalid(format!(
                "{CALL}: {} cannot take an array of type {}",
                n.describe(node),
                data.data_type()
            )));
        }
        self.check_array(CALL, node, data)?;
        self.column_write(node, |w| w.copy_data(node, data, 0, data.len()))
    }

    /// Validity of `data` for its logical rows `start..`.
    pub(super) fn bits_of(data: &ArrayData, start: usize) -> Option<Bits<'_>> {
        data.nulls().filter(|n| n.null_count() > 0).map(|n| Bits { bytes: n.validity(), offset: n.offset() + start })
    }

    /// Copies `count` validity bits into `node` (all valid when `bits` is None)
    /// and checks a non-nullable node gets no null.
    pub(super) fn copy_validity(&mut self, node: usize, call: &str, bits: Option<Bits>, count: usize) -> Result<()> {
        let n = &mut self.nodes[node];
        if bits.is_some() {
            // Nulls may come: the bits written so far are needed.
            n.materialize_validity(&mut self.counters);
        }
        let at = n.len;
        match (&mut n.validity, bits) {
            (Some(v), Some(b)) => n.null_count += v.copy_bits(at, b.bytes, b.offset, count),
            // Lazy validity: the bits of valid values are owed, not written.
            (Some(_), None) if n.valid_lazy => {}
            (Some(v), None) => v.set_bits_range(at, count),
            (None, Some(b)) => {
                let nulls = b.count_zeros(count);
                if nulls > 0 {
                    return Err(QuiverError::invalid(format!(
                        "{call}: {} is not nullable but the input has {nulls} nulls",
                        n.describe(node)
                    )));
                }
            }
            (None, None) => {}
        }
        Ok(())
    }

    /// A non-nullable node refuses input with nulls.
    pub(super) fn check_no_nulls(&self, node: usize, call: &str, bits: Option<Bits>, count: usize) -> Result<()> {
        let n = &self.nodes[node];
        if let (false, Some(b)) = (n.nullable, bits) {
            let nulls = b.count_zeros(count);
            if nulls > 0 {
                return Err(QuiverError::invalid(format!(
                    "{call}: {} is not nullable but the input has {nulls} nulls",
                    n.describe(node)
                )));
            }
        }
        Ok(())
    }

    /// Copies logical rows `start..start+count` of `data` into `node`.
    pub(crate) fn copy_data(&mut self, node: usize, data: &ArrayData, start: usize, count: usize) -> Result<()> {
        const CALL: &str = "write_array";
        let bits = Self::bits_of(data, start);
        let off = data.offset() + start;
        let kind = self.nodes[node].kind();
        match kind {
            Kind::Null => {
                self.nodes[node].len += count;
                self.nodes[node].null_count += count;
                return Ok(());
            }
            Kind::Bool => return self.copy_fixed(node, CALL, data.buffers()[0].as_slice(), off, bits, count),
            Kind::Fixed { .. } => {
                return self.copy_fixed(node, CALL, data.buffers()[0].as_slice(), off, bits, count).inspect_err(|_| {
                    // From an index past `off` to one of `data`.
                    self.refused_at = self.refused_at.map(|bad| start + bad);
                });
            }
            Kind::Encoded { .. } | Kind::Union { .. } | Kind::View { .. } | Kind::ListView { .. } => {
                // Written value by value, which sets validity and length.
                self.check_no_nulls(node, CALL, bits, count)?;
                return match kind {
                    Kind::Encoded { .. } => self.copy_encoded(node, data, start, count, bits),
                    Kind::Union { .. } => self.copy_union(node, data, start, count),
                    Kind::View { .. } => self.copy_views(node, data, start, count, bits),
                    _ => self.copy_list_views(node, data, start, count, bits),
                };
            }
            _ => {}
        }
        self.copy_validity(node, CALL, bits, count)?;
        match kind {
            Kind::Var { large, .. } | Kind::List { large } => {
                if large {
                    self.copy_offsets::<i64>(node, data, off, count, bits)?;
                } else {
                    self.copy_offsets::<i32>(node, data, off, count, bits)?;
                }
            }
            Kind::FixedList { size } => {
                let child = self.nodes[node].children[0];
                for_each_run(bits, count, |s, e, valid| {
                    if valid {
                        self.copy_data(child, &data.child_data()[0], (off + s) * size, (e - s) * size)
                            .inspect_err(|_| self.refused_at = self.refused_at.map(|j| j / size - data.offset()))
                    } else {
                        self.fill_null(child, (e - s) * size);
                        Ok(())
                    }
                })?;
            }
            Kind::Struct => {
                let children = self.nodes[node].children.clone();
                for_each_run(bits, count, |s, e, valid| {
                    for (i, &c) in children.iter().enumerate() {
                        if valid {
                            self.copy_data(c, &data.child_data()[i], off + s, e - s)
                                .inspect_err(|_| self.refused_at = self.refused_at.map(|j| j - data.offset()))?;
                        } else {
                            self.fill_null(c, e - s);
                        }
                    }
                    Ok(())
                })?;
            }
            _ => unreachable!("handled above"),
        }
        self.nodes[node].len += count;
        Ok(())
    }
}
