//! Recycling on vs off, outside criterion: per batch, the time per row and
//! the minor page faults (`getrusage`), and per case the peak RSS (VmHWM,
//! reset per case through /proc/self/clear_refs).
//!
//! Usage:
//!   recycle plan [--quick] [--fresh-runs N] [--allocator-subset]
//!       every case of the plan, each in a fresh process (N times, default 2;
//!       1 with --quick), then all of them again in this one process;
//!       --allocator-subset: only the cases measured on another allocator
//!   recycle one --group G --kind K --bytes S --recycle on|off [--hold H|all]
//!               [--retain R] [--batches B] [--warmup W] [--process P] [--run N]
//!
//! Groups: `sweep` (one writer, the consumer drops or holds batches on the
//! same thread), `thread` (a producer thread writes into a bounded queue of 2
//! batches; this thread imports them through quiver's C Stream with arrow-rs
//! and drops each), `two` (two writers on two threads at once, each dropping
//! its batches). Every case prints one JSON line.

use std::collections::VecDeque;
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use arrow_array::ffi_stream::RecordBatchStreamReader;
use quiver_bench_producer::recycle::{self, batch, minflt, reset_peak_rss, status_kib, Input, Kind};

#[cfg(all(feature = "mimalloc", feature = "jemalloc"))]
compile_error!("features mimalloc and jemalloc: choose one");

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[cfg(feature = "mimalloc")]
const ALLOC: &str = "mimalloc";
#[cfg(feature = "jemalloc")]
const ALLOC: &str = "jemalloc";
#[cfg(not(any(feature = "mimalloc", feature = "jemalloc")))]
const ALLOC: &str = "system";

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;
/// Depth of the bounded queue of the `thread` group.
const QUEUE_DEPTH: usize = 2;

#[derive(Debug, Clone)]
struct Case {
    group: String,
    kind: Kind,
    bytes: usize,
    recycle: bool,
    /// Batches the consumer keeps (the last ones); `usize::MAX`: all.
    hold: usize,
    retain: usize,
    batches: usize,
    warmup: usize,
}

impl Case {
    fn args(&self) -> Vec<String> {
        let hold = if self.hold == usize::MAX { "all".to_string() } else { self.hold.to_string() };
        [
            ("--group", self.group.clone()),
            ("--kind", self.kind.name().to_string()),
            ("--bytes", self.bytes.to_string()),
            ("--recycle", if self.recycle { "on" } else { "off" }.to_string()),
            ("--hold", hold),
            ("--retain", self.retain.to_string()),
            ("--batches", self.batches.to_string()),
            ("--warmup", self.warmup.to_string()),
        ]
        .into_iter()
        .flat_map(|(k, v)| [k.to_string(), v])
        .collect()
    }
}

/// Batches measured for a largest buffer of `bytes`: about 512 MiB of that
/// buffer per case, 12 to 2000 batches.
fn batches_for(bytes: usize, quick: bool) -> usize {
    let n = ((1usize << 29) / bytes).clamp(12, 2000);
    if quick {
        (n / 8).max(5)
    } else {
        n
    }
}

/// Every case; `subset`: the ones an allocator other than the system's is
/// measured on (one writer dropping int64 batches, two writers).
fn plan(quick: bool, subset: bool) -> Vec<Case> {
    let sweep: Vec<usize> = if quick {
        vec![64 * KIB, MIB, 32 * MIB]
    } else {
        vec![64 * KIB, 256 * KIB, MIB, 4 * MIB, 16 * MIB, 32 * MIB, 64 * MIB, 128 * MIB]
    };
    let few: Vec<usize> = if quick { vec![64 * KIB, 32 * MIB] } else { vec![64 * KIB, MIB, 32 * MIB, 128 * MIB] };
    let mut cases = Vec::new();
    let mut add = |group: &str, kind: Kind, bytes: usize, hold: usize, retain: usize, batches: usize| {
        // A consumer that holds batches fills the ring first: `retain` more
        // batches of warm-up before the steady state.
        let warmup = if hold > 0 && hold != usize::MAX { 3 + retain } else { 3 };
        for recycle in [true, false] {
            cases.push(Case { group: group.into(), kind, bytes, recycle, hold, retain, batches, warmup });
        }
    };
    if subset {
        for &b in &sweep {
            add("sweep", Kind::Int64, b, 0, 3, batches_for(b, quick));
        }
        for &b in &few {
            add("two", Kind::Int64, b, 0, 3, batches_for(b, quick));
        }
        return cases;
    }
    for kind in [Kind::Int64, Kind::Utf8] {
        for &b in &sweep {
            add("sweep", kind, b, 0, 3, batches_for(b, quick));
        }
    }
    for &b in &few {
        add("thread", Kind::Int64, b, 0, 3, batches_for(b, quick));
    }
    for &b in &few {
        add("two", Kind::Int64, b, 0, 3, batches_for(b, quick));
    }
    // Consumers that hold batches: the last 1, the last 3 (with the default
    // ring of 3 and with a ring of 4), all of them (12 batches).
    let held: Vec<usize> = if quick { vec![MIB] } else { vec![MIB, 32 * MIB] };
    for &b in &held {
        let n = if quick { 5 } else { 12 };
        add("sweep", Kind::Int64, b, 1, 3, batches_for(b, quick));
        add("sweep", Kind::Int64, b, 3, 3, batches_for(b, quick));
        add("sweep", Kind::Int64, b, 3, 4, batches_for(b, quick));
        add("sweep", Kind::Int64, b, usize::MAX, 3, n);
    }
    cases
}

/// Per measured batch: nanoseconds and minor page faults.
type Samples = Vec<(u64, u64)>;

struct Outcome {
    samples: Samples,
    rows: usize,
    batch_bytes: usize,
    /// Buffers newly allocated per measured batch (writer stats), when known.
    bufs_per_batch: Option<f64>,
    peak_kib: u64,
    after_kib: u64,
}

fn stats_delta(a: quiver::WriterStats, b: quiver::WriterStats, batches: usize) -> f64 {
    (b.buffers_allocated - a.buffers_allocated) as f64 / batches as f64
}

/// One writer; the consumer on this thread keeps the last `hold` batches.
fn same_thread(c: &Case, input: &Input, rows: usize) -> Outcome {
    let mut w = recycle::writer(c.kind, rows, c.recycle, c.retain);
    let mut held = VecDeque::new();
    let mut samples = Vec::with_capacity(c.batches);
    let mut at_warm = w.stats();
    let mut batch_bytes = 0;
    for i in 0..c.warmup + c.batches {
        if i == c.warmup {
            at_warm = w.stats();
        }
        let f0 = minflt(false);
        let t0 = Instant::now();
        let b = batch(&mut w, input);
        if batch_bytes == 0 {
            batch_bytes = b.get_array_memory_size();
        }
        if c.hold > 0 {
            held.push_back(b);
            while held.len() > c.hold {
                held.pop_front();
            }
        } else {
            drop(b);
        }
        let ns = t0.elapsed().as_nanos() as u64;
        let f1 = minflt(false);
        if i >= c.warmup {
            samples.push((ns, f1 - f0));
        }
    }
    let bufs = stats_delta(at_warm, w.stats(), c.batches);
    let peak_kib = status_kib("VmHWM");
    drop(held);
    let after_kib = status_kib("VmRSS");
    drop(w);
    Outcome { samples, rows, batch_bytes, bufs_per_batch: Some(bufs), peak_kib, after_kib }
}

/// A producer thread, a bounded queue, and this thread importing the
/// batches through the C Stream with arrow-rs: the time between two batches
/// arriving, and the faults of the whole process in that time.
fn threaded(c: &Case, input: Input, rows: usize) -> Outcome {
    let (stream, producer) = recycle::queue_stream(
        c.kind,
        Arc::new(input),
        rows,
        c.recycle,
        c.retain,
        c.warmup + c.batches,
        c.warmup,
        QUEUE_DEPTH,
    );
    let reader = RecordBatchStreamReader::try_new(stream).expect("import the stream");
    let mut samples = Vec::with_capacity(c.batches);
    let mut batch_bytes = 0;
    let mut last = (Instant::now(), minflt(false));
    for (i, b) in reader.enumerate() {
        let b = b.expect("batch");
        if batch_bytes == 0 {
            batch_bytes = b.get_array_memory_size();
        }
        drop(b);
        let now = (Instant::now(), minflt(false));
        if i >= c.warmup {
            samples.push(((now.0 - last.0).as_nanos() as u64, now.1 - last.1));
        }
        last = now;
    }
    let (at_warm, end) = producer.join().expect("producer thread");
    let bufs = stats_delta(at_warm, end, c.batches);
    let peak_kib = status_kib("VmHWM");
    let after_kib = status_kib("VmRSS");
    Outcome { samples, rows, batch_bytes, bufs_per_batch: Some(bufs), peak_kib, after_kib }
}

/// Two writers on two threads at once, each dropping its batches; faults
/// counted per thread (`RUSAGE_THREAD`).
fn two_writers(c: &Case, input: Input, rows: usize) -> Outcome {
    let input = Arc::new(input);
    let start = Arc::new(Barrier::new(2));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let (c, input, start) = (c.clone(), input.clone(), start.clone());
            thread::spawn(move || {
                let mut w = recycle::writer(c.kind, rows, c.recycle, c.retain);
                start.wait();
                let mut samples = Vec::with_capacity(c.batches);
                let mut at_warm = w.stats();
                let mut batch_bytes = 0;
                for i in 0..c.warmup + c.batches {
                    if i == c.warmup {
                        at_warm = w.stats();
                    }
                    let f0 = minflt(true);
                    let t0 = Instant::now();
                    let b = batch(&mut w, &input);
                    if batch_bytes == 0 {
                        batch_bytes = b.get_array_memory_size();
                    }
                    drop(b);
                    let ns = t0.elapsed().as_nanos() as u64;
                    let f1 = minflt(true);
                    if i >= c.warmup {
                        samples.push((ns, f1 - f0));
                    }
                }
                (samples, stats_delta(at_warm, w.stats(), c.batches), batch_bytes)
            })
        })
        .collect();
    let mut samples = Vec::new();
    let mut bufs = 0.0;
    let mut batch_bytes = 0;
    for h in handles {
        let (s, b, bb) = h.join().expect("writer thread");
        samples.extend(s);
        bufs += b / 2.0;
        batch_bytes = bb;
    }
    let peak_kib = status_kib("VmHWM");
    let after_kib = status_kib("VmRSS");
    Outcome { samples, rows, batch_bytes, bufs_per_batch: Some(bufs), peak_kib, after_kib }
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let at = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo as f64)
}

fn five(mut v: Vec<f64>) -> [f64; 5] {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    [quantile(&v, 0.0), quantile(&v, 0.25), quantile(&v, 0.5), quantile(&v, 0.75), quantile(&v, 1.0)]
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Runs one case in this process and returns its JSON line.
fn run_one(c: &Case, process: &str, run: usize) -> String {
    let rows = c.kind.rows(c.bytes);
    let input = Input::new(c.kind, rows);
    let reset = reset_peak_rss();
    let base_kib = status_kib("VmRSS");
    let o = match c.group.as_str() {
        "sweep" => same_thread(c, &input, rows),
        "thread" => threaded(c, input, rows),
        "two" => two_writers(c, input, rows),
        g => panic!("unknown group {g}"),
    };
    assert_eq!(o.samples.len(), if c.group == "two" { 2 * c.batches } else { c.batches });
    let ns_row = five(o.samples.iter().map(|s| s.0 as f64 / o.rows as f64).collect());
    let faults = five(o.samples.iter().map(|s| s.1 as f64).collect());
    let fault_mean = o.samples.iter().map(|s| s.1 as f64).sum::<f64>() / o.samples.len() as f64;
    let hold = if c.hold == usize::MAX { "all".to_string() } else { c.hold.to_string() };
    let list = |v: [f64; 5]| v.iter().map(|x| format!("{x:.4}")).collect::<Vec<_>>().join(",");
    let bufs = o.bufs_per_batch.map_or("null".to_string(), |b| format!("{b:.3}"));
    let peak = if reset || process == "fresh" { format!("{:.1}", mib(o.peak_kib)) } else { "null".into() };
    format!(
        concat!(
            "{{\"group\":\"{}\",\"kind\":\"{}\",\"bytes\":{},\"rows\":{},\"recycle\":{},\"hold\":\"{}\",",
            "\"retain\":{},\"alloc\":\"{}\",\"process\":\"{}\",\"run\":{},\"batches\":{},\"ns_row\":[{}],",
            "\"faults\":[{}],\"fault_mean\":{:.2},\"bufs_per_batch\":{},\"batch_mib\":{:.2},",
            "\"base_mib\":{:.1},\"peak_mib\":{},\"after_mib\":{:.1}}}"
        ),
        c.group,
        c.kind.name(),
        c.bytes,
        o.rows,
        c.recycle,
        hold,
        c.retain,
        ALLOC,
        process,
        run,
        c.batches,
        list(ns_row),
        list(faults),
        fault_mean,
        bufs,
        o.batch_bytes as f64 / MIB as f64,
        mib(base_kib),
        peak,
        mib(o.after_kib),
    )
}

fn parse_case(args: &[String]) -> (Case, String, usize) {
    let get = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let need = |k: &str| get(k).unwrap_or_else(|| panic!("{k} is required"));
    let num = |k: &str, d: usize| get(k).map_or(d, |v| v.parse().unwrap_or_else(|_| panic!("{k}: not a number")));
    let kind = Kind::parse(&need("--kind")).expect("--kind int64|utf8");
    let bytes: usize = need("--bytes").parse().expect("--bytes");
    let hold = match get("--hold").as_deref() {
        Some("all") => usize::MAX,
        Some(h) => h.parse().expect("--hold N|all"),
        None => 0,
    };
    let case = Case {
        group: need("--group"),
        kind,
        bytes,
        recycle: need("--recycle") == "on",
        hold,
        retain: num("--retain", 3),
        batches: num("--batches", batches_for(bytes, false)),
        warmup: num("--warmup", 3),
    };
    (case, get("--process").unwrap_or_else(|| "fresh".into()), num("--run", 1))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("one") => {
            let (case, process, run) = parse_case(&args[1..]);
            println!("{}", run_one(&case, &process, run));
        }
        Some("plan") => {
            let quick = args.iter().any(|a| a == "--quick");
            let runs = args
                .iter()
                .position(|a| a == "--fresh-runs")
                .and_then(|i| args.get(i + 1))
                .map_or(if quick { 1 } else { 2 }, |v| v.parse().expect("--fresh-runs N"));
            let exe = std::env::current_exe().expect("own path");
            let cases = plan(quick, args.iter().any(|a| a == "--allocator-subset"));
            for run in 1..=runs {
                for c in &cases {
                    let out = Command::new(&exe)
                        .arg("one")
                        .args(c.args())
                        .args(["--process", "fresh", "--run", &run.to_string()])
                        .output()
                        .expect("run a fresh process");
                    if !out.status.success() {
                        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
                        panic!("case {:?} failed", c.args());
                    }
                    print!("{}", String::from_utf8_lossy(&out.stdout));
                }
            }
            for c in &cases {
                println!("{}", run_one(c, "repeated", 1));
            }
        }
        _ => {
            eprintln!("usage: recycle plan [--quick] [--fresh-runs N] | recycle one --group G --kind K --bytes S --recycle on|off ...");
            std::process::exit(2);
        }
    }
}
