//! What an image costs before it reaches the model (`spine_tools::image::prepare`):
//! - `small_passthrough`: a 640x480 PNG within the limits — decoded once to validate, then
//!   sent byte for byte (base64 only);
//! - `large_downscale`: a 3000x2000 PNG — decoded, resized to 1568 px on the long side and
//!   re-encoded as PNG.
//!
//! Measured here (2 cores, release): small_passthrough 2.6 ms, large_downscale 134 ms.
//!
//! Run: `cargo bench -p spine-llm-tools --bench image_prepare`.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use spine_testkit::images::png;
use spine_tools::image::prepare;

fn bench(c: &mut Criterion) {
    let small = png(640, 480);
    let large = png(3000, 2000);
    let mut group = c.benchmark_group("image_prepare");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    group.bench_function("small_passthrough", |b| b.iter(|| prepare(small.clone()).expect("prepared")));
    group.bench_function("large_downscale", |b| b.iter(|| prepare(large.clone()).expect("prepared")));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
