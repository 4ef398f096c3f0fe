//! Replays the fuzz target's inputs without libFuzzer: the committed seed
//! corpus (fuzz/corpus/api_sequence/seed-*; a local fuzz run adds other,
//! ignored, files there) and every reduced crash
//! (fuzz/regressions/api_sequence/), each through the same driver and model
//! as `cargo fuzz run api_sequence`. A disagreement with the model panics.
//!
//! One test only: the driver checks at the end of each input that no
//! exported array is live, a count shared by the whole process.

#[path = "../fuzz/driver/api_sequence.rs"]
mod api_sequence;
#[path = "reliability/exported.rs"]
mod exported;

use std::path::Path;

/// The files of `dir` whose names start with `prefix`.
fn inputs(dir: &str, prefix: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    if !dir.exists() && dir.ends_with("regressions/api_sequence") {
        return vec![];
    }
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect()
}

#[test]
fn seed_corpus_and_regressions_replay_against_the_model() {
    let corpus = inputs("fuzz/corpus/api_sequence", "seed-");
    assert!(corpus.len() >= 24, "the seed corpus has {} files", corpus.len());
    // Every schema is among the seeds.
    for s in 0..3u8 {
        assert!(corpus.iter().any(|(_, d)| d.first().map(|b| b % 3) == Some(s)), "no seed for schema {s}");
    }
    api_sequence::take_events();
    for (name, data) in &corpus {
        let result = std::panic::catch_unwind(|| api_sequence::run(data));
        assert!(result.is_ok(), "seed {name} ({} bytes) disagrees with the model", data.len());
    }
    // The seeds reach every operation, and each call both succeeding and
    // failing in every way the model knows.
    let events = api_sequence::take_events();
    for ((op, outcome), n) in &events {
        eprintln!("{op:>12} {outcome:<14} {n}");
    }
    let mut missing = vec![];
    for op in ["append_null", "append", "begin", "end", "end_row", "finish", "write_column", "write_array"] {
        for outcome in ["ok", "EINVAL"] {
            if !events.contains_key(&(op, outcome)) {
                missing.push(format!("{op} {outcome}"));
            }
        }
    }
    let more = [
        ("append", "ERANGE"),
        ("write_column", "ERANGE"),
        ("abort_row", "ok"),
        ("row", "ok"),
        ("rows", "ok"),
        ("release", "ok"),
        ("move_child", "ok"),
        ("recheck", "ok"),
        ("pull", "batch"),
        ("pull", "end"),
        ("pull", "after the end"),
        ("pull", "EIO"),
        ("pull", "EINVAL"),
        ("pull", "sticky error"),
        ("drop_stream", "ok"),
        ("new_writer", "ok"),
    ];
    for (op, outcome) in more {
        if !events.contains_key(&(op, outcome)) {
            missing.push(format!("{op} {outcome}"));
        }
    }
    assert!(missing.is_empty(), "the seeds never reach: {missing:?} (reached: {events:?})");
    assert!(!events.keys().any(|&(_, outcome)| outcome == "other"), "an unexpected code: {events:?}");

    for (name, data) in &inputs("fuzz/regressions/api_sequence", "") {
        let result = std::panic::catch_unwind(|| api_sequence::run(data));
        assert!(result.is_ok(), "regression {name} ({} bytes) disagrees with the model", data.len());
    }
}
