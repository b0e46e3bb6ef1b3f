//! `spine completions SHELL` and `spine man`: a shell completion script and the manual page,
//! generated from the command-line definition, so they never disagree with it. Written whole
//! on stdout (a reader that stops early, `| head`, is not an error).
//!
//! Install: `spine completions bash > ~/.local/share/bash-completion/completions/spine`,
//! `spine completions zsh > "${fpath[1]}/_spine"`, `spine completions fish >
//! ~/.config/fish/completions/spine.fish`; `spine man > ~/.local/share/man/man1/spine.1`.

use clap::CommandFactory;

use crate::cli::Cli;
use crate::error::exit;
use crate::out;

/// Prints the completion script of `shell`.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<u8> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "spine", &mut script);
    let _ = out::text(String::from_utf8_lossy(&script));
    Ok(exit::OK)
}

/// Prints the manual page (roff).
pub fn man() -> anyhow::Result<u8> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut page)?;
    let _ = out::text(String::from_utf8_lossy(&page));
    Ok(exit::OK)
}
