use std::sync::Arc;

use arrow_array::{cast::AsArray, types::Int32Type, Array, Int32Array, ListArray, StringArray};
use quiver::{parse_schema, ArrowWriter, WriterOptions};

#[test]
fn row_path_and_column_path_make_valid_batches() {
    let schema = Arc::new(
        parse_schema("a: int32, s: utf8, l: list<int32>, p: struct<x: float64, y: int8 not null>, m: map<utf8, int64>")
            .unwrap(),
    );
    let mut w = ArrowWriter::create(schema, WriterOptions::default()).unwrap();
    for i in 0..10 {
        if i % 3 == 0 {
            w.append_null(0).unwrap()
        } else {
            w.append_i32(0, i).unwrap()
        }
        w.append_str(1, &format!("s{i}")).unwrap();
        w.begin(2).unwrap();
        for j in 0..i {
            w.append_i32(3, j).unwrap();
        }
        w.end(2).unwrap();
        if i % 4 == 0 {
            w.append_null(4).unwrap()
        } else {
            w.begin(4).unwrap();
            w.append_f64(5, i as f64).unwrap();
            w.append_i8(6, i as i8).unwrap();
            w.end(4).unwrap();
        }
        w.begin(7).unwrap();
        w.begin(8).unwrap();
        w.append_str(9, "k").unwrap();
        w.append_i64(10, i as i64).unwrap();
        w.end(8).unwrap();
        w.end(7).unwrap();
        w.end_row().unwrap();
    }
    let b = w.finish().unwrap();
    for c in b.columns() {
        c.to_data().validate_full().unwrap();
    }
    assert_eq!(b.num_rows(), 10);
    assert_eq!(b.column(0).as_primitive::<Int32Type>().value(1), 1);
    assert!(b.column(0).is_null(3));
    assert_eq!(b.column(1).as_string::<i32>().value(7), "s7");
    let l: &ListArray = b.column(2).as_list::<i32>();
    assert_eq!(l.value(5).len(), 5);
    // column path from the batch itself, sliced
    let mut w2 = ArrowWriter::create(b.schema(), WriterOptions::default()).unwrap();
    for (i, c) in b.columns().iter().enumerate() {
        let node = w2.column_node(b.schema().field(i).name()).unwrap();
        w2.write_array(node, &c.slice(2, 6)).unwrap();
    }
    let b2 = w2.finish().unwrap();
    for c in b2.columns() {
        c.to_data().validate_full().unwrap();
    }
    assert_eq!(b2, b.slice(2, 6));
    let _ = (Int32Array::from(vec![1]), StringArray::from(vec!["a"]));
}
