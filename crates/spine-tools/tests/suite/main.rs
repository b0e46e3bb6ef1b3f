//! spine-tools behaviour through its public API: every built-in tool is prepared through a
//! real registry (schema check and path normalisation, as the runner does) and executed
//! against real files in temporary directories and real processes. Each test pins one rule.

mod support;

mod bash;
mod boundary;
mod calculator;
mod files;
mod registry;
mod search;
