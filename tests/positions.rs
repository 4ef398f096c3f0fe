//! Row-path positions on the checked (slow) path, and the rollback helpers
//! of src/writer/position.rs, in the cases the broader suites reach only by
//! chance. Each test names the mutant of scripts/mutants.sh it was written
//! to kill (docs/reliability.md, "Mutation testing").

use arrow_array::cast::AsArray;
use arrow_array::types::Decimal128Type;
use arrow_array::Array;
use quiver::{ArrowWriter, ErrorCode, WriterOptions};

/// A decimal appended as an i64 is not on the fast path (`append_le` checks
/// the position with `target`), so a fixed-size list item written that way
/// goes through `parent_slot_free`: it takes exactly `size` values per entry.
/// Kills: `delete match arm Layout::FixedList{size} in
/// ArrowWriter::parent_slot_free`, and its `<` / `*` / `+` mutants.
#[test]
fn a_fixed_size_list_item_on_the_checked_path_takes_size_values() {
    let mut w = ArrowWriter::from_text("d: fixed_size_list<decimal128(5, 0), 2>", WriterOptions::default()).unwrap();
    for row in 0..3i64 {
        w.begin(0).unwrap();
        w.append_i64(1, 10 * row + 1).unwrap();
        w.append_i64(1, 10 * row + 2).unwrap();
        let e = w.append_i64(1, 99).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains("already has its 2 values"), "{e}");
        w.end(0).unwrap();
        w.end_row().unwrap();
    }
    let b = w.finish().unwrap();
    b.column(0).to_data().validate_full().unwrap();
    let items = b.column(0).as_fixed_size_list().values().as_primitive::<Decimal128Type>().clone();
    let got: Vec<i128> = items.iter().map(Option::unwrap).collect();
    assert_eq!(got, [1, 2, 11, 12, 21, 22]);
}
