//! The sandbox helper as a program of its own: `spine-sandbox-exec ENCODED-POLICY -- PROGRAM
//! [ARGS…]`. It is exactly the glue spine's `__sandbox` subcommand holds.

// A binary links every dependency of its package; it uses only the library.
#![allow(unused_crate_dependencies)]

use std::process::ExitCode;

fn main() -> ExitCode {
    spine_sandbox::helper_main(std::env::args_os().skip(1))
}
