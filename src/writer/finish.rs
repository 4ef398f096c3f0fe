//! Finishing a batch: every node's buffers frozen (zero copy) into arrow
//! array data and one record batch (docs/design.md §2 rule 1).

use std::sync::Arc;

use arrow_array::{downcast_primitive, make_array, ArrayRef, ArrowPrimitiveType, PrimitiveArray, RecordBatch};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, ScalarBuffer};
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::DataType;

use crate::error::{QuiverError, Result};
use crate::layout::Layout;
use crate::node::Kind;

use super::{ArrowWriter, NOT_STARTED};

impl ArrowWriter {
    /// The committed rows as a record batch; the writer starts the next batch
    /// (lazily, at its first write). An incomplete row is an error and stays.
    /// The batch owns its buffers; once it (and every array taken from it)
    /// is dropped, a later batch may reuse them.
    ///
    /// ```
    /// # use quiver::{ArrowWriter, WriterOptions};
    /// let mut w = ArrowWriter::from_text("x: int32", WriterOptions::default())?;
    /// for batch_no in 0..3 {
    ///     for i in 0..100 {
    ///         w.append_i32(0, i)?;
    ///         w.end_row()?;
    ///     }
    ///     let batch = w.finish()?;
    ///     assert_eq!(batch.num_rows(), 100);
    ///     drop(batch); // released: the next batch reuses its buffers
    ///     if batch_no > 0 {
    ///         assert!(w.stats().buffers_reused > 0);
    ///     }
    /// }
    /// # Ok::<(), quiver::QuiverError>(())
    /// ```
    pub fn finish(&mut self) -> Result<RecordBatch> {
        self.start();
        if let Some(&o) = self.open.last() {
            return Err(QuiverError::invalid(format!(
                "finish: row {} is incomplete: {} is still open; end_row or abort_row first",
                self.rows,
                self.nodes[o].describe(o)
            )));
        }
        if let Some(&c) = self.top.iter().find(|&&c| self.nodes[c].len != self.rows) {
            return Err(QuiverError::invalid(format!(
                "finish: row {} is incomplete: {} has {} values for {} committed rows; end_row or abort_row first",
                self.rows,
                self.nodes[c].describe(c),
                self.nodes[c].len,
                self.rows
            )));
        }
        let columns: Vec<ArrayRef> = (0..self.top.len()).map(|i| self.freeze_column(self.top[i])).collect();
        debug_assert_eq!(self.schema.fields().len(), columns.len());
        // What `RecordBatch::try_new` checks but the types, which are the
        // fields' own (`freeze` builds each column of its field's type).
        for (field, column) in self.schema.fields().iter().zip(&columns) {
            if column.len() != self.rows || (!field.is_nullable() && column.null_count() > 0) {
                return Err(QuiverError::invalid(format!(
                    "finish: column '{}' has {} rows and {} nulls for {} rows",
                    field.name(),
                    column.len(),
                    column.null_count(),
                    self.rows
                )));
            }
        }
        // SAFETY: one column per field of the schema, each of the field's
        // type (built from it by `freeze`), `rows` long, and without nulls
        // where the field is not nullable (checked above).
        let batch = unsafe { RecordBatch::new_unchecked(self.schema.clone(), columns, self.rows) };
        self.started = false;
        self.open_top = NOT_STARTED;
        self.rows = 0;
        self.batches += 1;
        Ok(batch)
    }

    /// Freezes top-level column `node` into an array: a primitive column
    /// straight into its typed array, anything else through its array data.
    fn freeze_column(&mut self, node: usize) -> ArrayRef {
        let n = &self.nodes[node];
        if !(n.field.data_type().is_primitive() && n.children.is_empty() && matches!(n.layout, Layout::Fixed { .. })) {
            return make_array(self.freeze(node));
        }
        let nulls = self.finish_validity(node);
        let (recycle, retain) = (self.options.recycle, self.options.retain);
        let n = &mut self.nodes[node];
        let (len, null_count) = (n.len, n.null_count);
        let Layout::Fixed { values, width, .. } = &mut n.layout else { unreachable!("checked above") };
        let values = values.finish(len * *width, recycle, retain, &mut self.counters);
        let nulls = nulls.map(|bits| {
            // SAFETY: `null_count` is the number of unset bits in the first
            // `len` bits, which the writer counts as it writes them.
            unsafe { NullBuffer::new_unchecked(BooleanBuffer::new(bits, 0, len), null_count) }
        });
        primitive_array(n.field.data_type(), values, nulls, len)
    }

    /// Freezes the validity of `node` (into the ring like every buffer):
    /// its bits when the node has nulls, else `None`. A lazy bitmap was
    /// never started this batch: there is nothing to freeze.
    fn finish_validity(&mut self, node: usize) -> Option<Buffer> {
        let (recycle, retain) = (self.options.recycle, self.options.retain);
        let n = &mut self.nodes[node];
        if n.valid_lazy {
            // No bitmap, or no null this batch and the bitmap's buffer
            // never taken (a null-type node has nulls and no bitmap).
            debug_assert!(n.validity.is_none() || n.null_count == 0, "a null ends lazy validity");
            return None;
        }
        let bits = n.validity.as_mut().map(|v| v.finish(n.len.div_ceil(8), recycle, retain, &mut self.counters));
        bits.filter(|_| n.null_count > 0)
    }

    /// Freezes the buffers of `node` and its children into array data.
    pub(super) fn freeze(&mut self, node: usize) -> ArrayData {
        let child_data: Vec<ArrayData> =
            self.nodes[node].children.clone().into_iter().map(|c| self.freeze(c)).collect();
        let nulls = self.finish_validity(node);
        let (recycle, retain) = (self.options.recycle, self.options.retain);
        let runs = self.nodes[node].value_node.map_or(0, |v| self.nodes[v].len);
        let counters = &mut self.counters;
        let n = &mut self.nodes[node];
        let len = n.len;
        let mut buffers = n.layout.finish(len, runs, recycle, retain, counters);
        let mut child_data = child_data;
        if let DataType::RunEndEncoded(run_ends, _) = n.field.data_type() {
            let run_ends =
                ArrayDataBuilder::new(run_ends.data_type().clone()).len(runs).buffers(std::mem::take(&mut buffers));
            // SAFETY: run ends are increasing, one per value of the value node.
            child_data.insert(0, unsafe { run_ends.build_unchecked() });
        }
        let data_type: DataType = n.field.data_type().clone();
        let null_count = if n.kind() == Kind::Null { len } else { n.null_count };
        let builder = ArrayDataBuilder::new(data_type)
            .len(len)
            .null_count(null_count)
            .null_bit_buffer(nulls)
            .buffers(buffers)
            .child_data(child_data);
        // SAFETY: the writer built every buffer for this type: lengths, offsets
        // (monotonic, within the data), validity and null counts agree, children
        // have the lengths their parents address. Tests run `validate_full`.
        unsafe { builder.build_unchecked() }
    }
}

/// The primitive array of type `data_type` over `values` (`len` values,
/// the whole buffer). The buffer is taken whole (no slice, so no handle
/// cloned and dropped), and the type set only where it has parameters
/// (decimals, timestamps with a zone, ...) beyond the native type's own.
fn primitive_array(data_type: &DataType, values: Buffer, nulls: Option<NullBuffer>, len: usize) -> ArrayRef {
    macro_rules! typed {
        ($t:ty) => {{
            let values = ScalarBuffer::<<$t as ArrowPrimitiveType>::Native>::from(values);
            debug_assert_eq!(values.len(), len, "a column's values end at its length");
            let array = PrimitiveArray::<$t>::new(values, nulls);
            if *data_type == <$t as ArrowPrimitiveType>::DATA_TYPE {
                Arc::new(array)
            } else {
                Arc::new(array.with_data_type(data_type.clone()))
            }
        }};
    }
    downcast_primitive! {
        data_type => (typed),
        t => unreachable!("{t} is not a primitive type"),
    }
}
