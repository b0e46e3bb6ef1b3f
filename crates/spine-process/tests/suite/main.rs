//! spine-process through its public API, with real processes: each test pins one rule of the
//! contract (stdin payload, EPIPE tolerance, caps, time limit, cancellation, drop guard).

mod support;

mod group;
mod run;
