//! The `spine` binary: parses arguments, runs the command, maps the outcome to an exit status.
//!
//! Exit status: 0 success; 1 the run failed (error, max turns, blocked); 2 bad usage or bad
//! configuration; 130, 143 or 129 canceled by SIGINT (Ctrl-C), SIGTERM or SIGHUP.
//!
//! `spine __sandbox ENCODED-POLICY -- PROGRAM ARGS…` (hidden) is the sandbox helper
//! (spine-sandbox's `helper_main`): intercepted before anything else runs, because it must
//! confine a single-threaded process; it exits like the command (126 when confinement fails).

// Unit tests link the dev-dependencies of every other target too; the lint checks the
// binary's own list (see the workspace Cargo.toml).
#![cfg_attr(test, allow(unused_crate_dependencies))]

mod chat;
mod cli;
mod colour;
mod commands;
mod error;
mod flags;
mod guard;
mod host_flags;
mod out;
mod render;
mod sandbox;
mod sdk;
mod sdk_flags;
mod session_open;
mod sessions;
mod shown_notes;
mod signals;
mod telemetry;
mod withheld;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::error::{ConfigError, exit};

fn main() -> ExitCode {
    // `spine __sandbox POLICY -- COMMAND…`: the sandbox helper confines itself and runs the
    // command. First thing, before any thread starts (confinement refuses a threaded process).
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new(spine_sandbox::SPINE_SUBCOMMAND)) {
        return spine_sandbox::helper_main(std::env::args_os().skip(2));
    }
    // The Agent SDKs' flags spine accepts and ignores (`sdk_flags`) are taken out first.
    let stripped = sdk_flags::strip(std::env::args_os(), is_other_command);
    let cli = match Cli::try_parse_from(&stripped.args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { exit::CONFIG } else { exit::OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let verbose = match &cli.command {
        Some(Command::Run(args) | Command::Chat(args)) => args.verbose,
        _ => cli.run.verbose,
    };
    if verbose {
        for note in stripped.notes() {
            eprintln!("{note}");
        }
    }
    let command = match cli.command {
        Some(command) => command,
        None if cli.run.print
            || cli.run.prompt.is_some()
            || cli.run.init_only
            || cli.run.host.input_format == cli::InputFormat::StreamJson =>
        {
            Command::Run(Box::new(cli.run))
        }
        None if chat::wanted(&cli.run) => Command::Chat(Box::new(cli.run)),
        None => {
            // No command, no prompt and no -p: the usage, as clap prints it for a missing command.
            eprintln!("{}", <Cli as clap::CommandFactory>::command().render_help());
            return ExitCode::from(exit::CONFIG);
        }
    };
    if matches!(command, Command::Guard) {
        return match spine_process::guard::serve() {
            Ok(()) => ExitCode::from(exit::OK),
            Err(_) => ExitCode::from(exit::FAILED),
        };
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(exit::FAILED);
        }
    };
    let result = runtime.block_on(async {
        match command {
            Command::Run(args) if args.host.input_format == cli::InputFormat::StreamJson => sdk::serve(*args).await,
            Command::Run(args) if chat::wanted(&args) => chat::chat(*args).await,
            Command::Run(args) => commands::run::run(*args).await,
            Command::Chat(args) => chat::chat(*args).await,
            Command::Hooks(cmd) => commands::hooks::hooks(cmd).await,
            Command::Trace(cmd) => commands::trace::trace(cmd),
            #[cfg(feature = "sqlite")]
            Command::Worker(args) => commands::worker::worker(args).await,
            Command::Trust(args) => commands::trust::trust(args),
            Command::Mcp(cmd) => commands::mcp::mcp(cmd).await,
            Command::Plugin(args) => commands::plugin::plugin(args),
            #[cfg(feature = "sqlite")]
            Command::Submit(args) => commands::submit::submit(args).await,
            #[cfg(feature = "sqlite")]
            Command::Reports(args) => commands::reports::reports(args).await,
            Command::Sessions(cmd) => commands::sessions::sessions(cmd),
            Command::Doctor(args) => commands::doctor::doctor(args).await,
            Command::Completions { shell } => commands::completions::completions(shell),
            Command::Man => commands::completions::man(),
            Command::Guard => Ok(exit::OK),
        }
    });
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            if err.downcast_ref::<ConfigError>().is_some() {
                eprintln!("error: {err}");
                ExitCode::from(exit::CONFIG)
            } else {
                eprintln!("error: {err:#}");
                ExitCode::from(exit::FAILED)
            }
        }
    }
}

/// Whether `word` names a command other than the agent's (`run`, `chat`): its command line
/// keeps the Agent SDK flags `sdk_flags` would take out.
fn is_other_command(word: &str) -> bool {
    let command = <Cli as clap::CommandFactory>::command();
    command
        .get_subcommands()
        .filter(|c| !matches!(c.get_name(), "run" | "chat"))
        .any(|c| c.get_name() == word || c.get_all_aliases().any(|a| a == word))
}
