//! Commands a remembered rule names exactly: programs that run code they are given, so a
//! prefix rule (`Bash(python3:*)`) would allow any program at all.
//!
//! Contract of [`runs_given_code`], on one simple command's words (quoting resolved):
//! - interpreters and shells, by the program's basename: `sh`, `bash`, `zsh`, `dash`, `ksh`,
//!   `fish`…, `python*`, `pypy*`, `perl*`, `ruby*`, `irb`, `php*`, `lua*`, `node*`, `deno`,
//!   `bun`, `tclsh`, `expect`, `Rscript`, `osascript`, `pwsh`, the `awk` family, `sed` (its
//!   `e` command runs a shell), editors that run commands (`vi`, `vim`, `nvim`, `ex`, `ed`,
//!   `emacs`);
//! - programs that run another program from their arguments: `env`, `xargs`, `sudo`, `doas`,
//!   `su`, `exec`, `command`, `builtin`, `nohup`, `nice`, `time`, `timeout`, `stdbuf`,
//!   `setsid`, `busybox`, `coproc`, `chroot`, `unshare`, `nsenter`, `flock`, `watch`,
//!   `strace`, `ltrace`, `script`, `parallel`, `ssh`, `runuser`, `npx`, `bunx`, `pnpx`, `uvx`;
//! - a run/exec subcommand ([`RUN_SUBCOMMANDS`]): `npm run`, `npm exec`, `npm x`, `pnpm dlx`,
//!   `pnpm exec`, `pnpm run`, `yarn dlx`, `yarn exec`, `yarn run`, `uv run`, `uv tool run`,
//!   `cargo run`, `go run`, `docker run`/`exec`, `podman run`/`exec`, `kubectl exec`/`run`,
//!   `bundle exec`, `poetry run`, `pipx run`, `pdm run`, `hatch run`, `conda run`,
//!   `mise exec`/`x`, `nix run`, `nix shell`.

use super::shell::basename;

/// Shells and language interpreters (and tools with a command language of their own).
fn is_interpreter(program: &str) -> bool {
    const NAMES: &[&str] = &[
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "mksh",
        "ash",
        "fish",
        "yash",
        "rbash",
        "csh",
        "tcsh",
        "irb",
        "node",
        "nodejs",
        "deno",
        "bun",
        "tclsh",
        "wish",
        "expect",
        "Rscript",
        "R",
        "osascript",
        "pwsh",
        "powershell",
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "busybox",
        "sed",
        "gsed",
        "vi",
        "vim",
        "nvim",
        "ex",
        "ed",
        "emacs",
        "julia",
    ];
    const PREFIXES: &[&str] = &["python", "pypy", "perl", "ruby", "php", "lua", "node"];
    NAMES.contains(&program) || PREFIXES.iter().any(|p| program.starts_with(p))
}

/// Programs that run a program named in their arguments.
const RUNNERS: &[&str] = &[
    "env", "xargs", "sudo", "doas", "su", "exec", "command", "builtin", "nohup", "nice", "time", "timeout", "stdbuf",
    "setsid", "coproc", "chroot", "unshare", "nsenter", "flock", "watch", "strace", "ltrace", "script", "parallel",
    "ssh", "runuser", "pkexec", "npx", "bunx", "pnpx", "uvx",
];

/// `(program, subcommand)` pairs that run code or a program given on the command line.
pub const RUN_SUBCOMMANDS: &[(&str, &str)] = &[
    ("npm", "run"),
    ("npm", "run-script"),
    ("npm", "exec"),
    ("npm", "x"),
    ("pnpm", "dlx"),
    ("pnpm", "exec"),
    ("pnpm", "run"),
    ("yarn", "dlx"),
    ("yarn", "exec"),
    ("yarn", "run"),
    ("uv", "run"),
    ("uv", "tool"),
    ("cargo", "run"),
    ("go", "run"),
    ("docker", "run"),
    ("docker", "exec"),
    ("podman", "run"),
    ("podman", "exec"),
    ("kubectl", "exec"),
    ("kubectl", "run"),
    ("bundle", "exec"),
    ("poetry", "run"),
    ("pipx", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("conda", "run"),
    ("mise", "exec"),
    ("mise", "x"),
    ("nix", "run"),
    ("nix", "shell"),
];

/// Whether the command runs code or a program it is given, so that only a rule naming it
/// exactly may be remembered for it (see the module contract).
pub fn runs_given_code(argv: &[String]) -> bool {
    let Some(program) = argv.first().map(|p| basename(p)) else {
        return false;
    };
    if is_interpreter(program) || RUNNERS.contains(&program) {
        return true;
    }
    argv.get(1).is_some_and(|sub| RUN_SUBCOMMANDS.iter().any(|(p, s)| *p == program && s == sub))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(command: &str) -> Vec<String> {
        command.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn interpreters_runners_and_run_subcommands_run_given_code() {
        for command in [
            "bash -c x",
            "/bin/sh x",
            "python3.12 -c x",
            "perl -e x",
            "node x.js",
            "env A=1 ls",
            "xargs rm",
            "sudo ls",
            "npm run build",
            "npm exec x",
            "npx prettier",
            "uv run pytest",
            "docker exec c sh",
            "cargo run --bin x",
            "go run .",
            "pnpm dlx x",
            "yarn dlx x",
            "bundle exec rake",
            "poetry run x",
            "pipx run x",
            "awk 1",
            "sed -n 1p",
        ] {
            assert!(runs_given_code(&argv(command)), "{command}");
        }
        for command in ["ls -la", "npm test", "cargo test", "git status", "docker ps", "go build ./...", "grep x"] {
            assert!(!runs_given_code(&argv(command)), "{command}");
        }
    }
}
