//! Every byte a consumer can read of a batch, for every type the writer
//! takes: lengths, null counts, each buffer over its logical extent, children
//! and dictionaries recursively. Two batches with equal `exact_bytes` are the
//! same batch to any consumer of the C Data Interface.
#![allow(dead_code)]

use arrow_array::RecordBatch;
use arrow_data::ArrayData;
use arrow_schema::DataType;

/// Appends the readable state of `data` (offset 0, as the writer exports it).
pub fn exact_data(data: &ArrayData, out: &mut Vec<u8>) {
    let n = data.len();
    out.extend_from_slice(
        format!("[{} len {n} nulls {} off {}", data.data_type(), data.null_count(), data.offset()).as_bytes(),
    );
    match data.nulls() {
        Some(nulls) => {
            out.extend_from_slice(b"|v");
            let bits = nulls.buffer().as_slice();
            out.extend_from_slice(&bits[..n.div_ceil(8).min(bits.len())]);
        }
        None => out.extend_from_slice(b"|-"),
    }
    let buf = |i: usize, bytes: usize, out: &mut Vec<u8>| {
        let b = data.buffers()[i].as_slice();
        assert!(b.len() >= bytes, "{}: buffer {i} holds {} bytes, {bytes} readable", data.data_type(), b.len());
        out.extend_from_slice(format!("|b{i}:").as_bytes());
        out.extend_from_slice(&b[..bytes]);
    };
    let last = |i: usize, width: usize| -> usize {
        let b = &data.buffers()[i].as_slice()[n * width..(n + 1) * width];
        if width == 4 {
            i32::from_le_bytes(b.try_into().unwrap()) as usize
        } else {
            i64::from_le_bytes(b.try_into().unwrap()) as usize
        }
    };
    match data.data_type() {
        DataType::Null | DataType::Struct(_) | DataType::FixedSizeList(..) | DataType::RunEndEncoded(..) => {}
        DataType::Boolean => buf(0, n.div_ceil(8), out),
        DataType::Utf8 | DataType::Binary => {
            buf(0, (n + 1) * 4, out);
            buf(1, last(0, 4), out);
        }
        DataType::LargeUtf8 | DataType::LargeBinary => {
            buf(0, (n + 1) * 8, out);
            buf(1, last(0, 8), out);
        }
        DataType::List(_) | DataType::Map(..) => buf(0, (n + 1) * 4, out),
        DataType::LargeList(_) => buf(0, (n + 1) * 8, out),
        DataType::ListView(_) => {
            buf(0, n * 4, out);
            buf(1, n * 4, out);
        }
        DataType::LargeListView(_) => {
            buf(0, n * 8, out);
            buf(1, n * 8, out);
        }
        DataType::Utf8View | DataType::BinaryView => {
            buf(0, n * 16, out);
            for i in 1..data.buffers().len() {
                let len = data.buffers()[i].len();
                buf(i, len, out);
            }
        }
        DataType::Union(_, mode) => {
            buf(0, n, out);
            if *mode == arrow_schema::UnionMode::Dense {
                buf(1, n * 4, out);
            }
        }
        DataType::Dictionary(key, _) => buf(0, n * key.primitive_width().unwrap(), out),
        dt => {
            let width = dt.primitive_width().unwrap_or_else(|| match dt {
                DataType::FixedSizeBinary(w) => *w as usize,
                _ => panic!("exact_data: no layout for {dt}"),
            });
            buf(0, n * width, out);
        }
    }
    for child in data.child_data() {
        exact_data(child, out);
    }
    out.push(b']');
}

/// `exact_data` of every column of `batch`, with the row count.
pub fn exact_bytes(batch: &RecordBatch) -> Vec<u8> {
    let mut out = format!("rows {}", batch.num_rows()).into_bytes();
    for c in batch.columns() {
        exact_data(&c.to_data(), &mut out);
    }
    out
}

/// Panics with the first difference when the batches differ in any readable byte.
pub fn assert_same_batch(got: &RecordBatch, want: &RecordBatch, what: &str) {
    let (g, w) = (exact_bytes(got), exact_bytes(want));
    if g != w {
        let at = g.iter().zip(&w).position(|(a, b)| a != b).unwrap_or(g.len().min(w.len()));
        let from = at.saturating_sub(60);
        panic!(
            "{what}: batches differ at byte {at}\n got: {:?}\nwant: {:?}\n got batch: {got:?}\nwant batch: {want:?}",
            String::from_utf8_lossy(&g[from..(at + 60).min(g.len())]),
            String::from_utf8_lossy(&w[from..(at + 60).min(w.len())]),
        );
    }
}
