//! How `spine run` reports its outcome: the result in the chosen output format (text, JSON,
//! stream-JSON), the notes on stderr, and the exit status.
//!
//! Contract: with text output, a success's result goes to stdout and anything else to stderr;
//! with JSON or stream-JSON, the result object goes to stdout — for a configuration error
//! too ([`config_error`]). The exit status is 0 for a success or a deferral, 128 + the signal's
//! number for a run a signal canceled, 1 for any other end.

use std::time::Instant;

use spine_core::runner::RunOutcome;
use spine_protocol::run::RunSubtype;

use crate::cli::{OutputFormat, RunArgs};
use crate::error::exit;
use crate::out;
use crate::render::result::{ResultContext, config_error_json, denial_note, permission_denials, result_json};
use crate::render::stream_json::emit;

/// With a JSON output format, a configuration error `e` is also printed as a result object on
/// stdout (the error line on stderr and exit status 2 stay, the caller's).
pub(crate) fn config_error(e: &anyhow::Error, format: OutputFormat, started: Instant) {
    if let Some(config) = e.downcast_ref::<crate::error::ConfigError>()
        && format != OutputFormat::Text
    {
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let _ = out::line(config_error_json(&config.0, duration_ms));
    }
}

/// Prints the outcome of the run in `args`' output format, then the denial note and the stop
/// reason on stderr (unless `-q`).
pub(super) fn print_outcome(
    outcome: &RunOutcome,
    args: &RunArgs,
    result_context: &ResultContext<'_>,
    settings: &spine_settings::Settings,
) {
    match args.output_format {
        OutputFormat::Text => match outcome.subtype {
            RunSubtype::Success => {
                let _ = out::line(&outcome.result);
            }
            RunSubtype::Deferred => eprintln!("{}", outcome.result),
            RunSubtype::ErrorMaxTurns
            | RunSubtype::ErrorMaxBudgetUsd
            | RunSubtype::ErrorDuringExecution
            | RunSubtype::Blocked
            | RunSubtype::Canceled => {
                eprintln!("error ({}): {}", subtype_name(outcome.subtype), outcome.result);
            }
        },
        OutputFormat::Json => {
            let _ = out::line(result_json(outcome, result_context));
        }
        OutputFormat::StreamJson => emit(&result_json(outcome, result_context)),
    }
    if !args.quiet
        && !args.verbose
        && let Some(note) = denial_note(&permission_denials(outcome), settings.managed.permission_rules_only.as_ref())
    {
        eprintln!("{note}");
    }
    if let Some(reason) = &outcome.stop_reason
        && !args.quiet
        && args.output_format == OutputFormat::Text
    {
        eprintln!("stopped: {reason}");
    }
}

/// The exit status of the run; `signal` is the number of the signal that canceled it (0: none).
pub(crate) fn exit_status(outcome: &RunOutcome, signal: u8) -> u8 {
    match outcome.subtype {
        RunSubtype::Success | RunSubtype::Deferred => exit::OK,
        RunSubtype::Canceled if signal != 0 => signal,
        RunSubtype::ErrorMaxTurns
        | RunSubtype::ErrorMaxBudgetUsd
        | RunSubtype::ErrorDuringExecution
        | RunSubtype::Blocked
        | RunSubtype::Canceled => exit::FAILED,
    }
}

fn subtype_name(s: RunSubtype) -> String {
    serde_json::to_value(s).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}
