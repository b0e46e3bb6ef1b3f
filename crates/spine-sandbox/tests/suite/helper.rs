//! The helper's contract: exit codes, signals, errors, probing, and its cost.

use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use spine_sandbox::{Policy, TIMING_VARIABLE, probe_with};

use crate::common::{Fixture, describe, helper};

#[test]
fn the_command_exit_code_is_forwarded() {
    let f = Fixture::new();
    let out = f.sh(Some(&f.policy()), "exit 7");
    assert_eq!(out.status.code(), Some(7), "{}", describe(&out));
}

#[test]
fn the_helper_dies_of_the_command_signal() {
    let f = Fixture::new();
    // The command signals itself: its signal mask is clear even though the helper holds
    // SIGTERM for itself, and the helper then dies of the same signal.
    let out = f.sh(Some(&f.policy()), "kill -TERM $$; sleep 5");
    assert_eq!(out.status.signal(), Some(15), "{}", describe(&out));
    // SIGINT as the caller left it: default, the command dies of it; ignored (a background
    // job, `nohup`, some CI runners), the command inherits the ignore and goes on.
    let out = f.sh(Some(&f.policy()), "kill -INT $$; echo survived");
    if this_process_ignores(2) {
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("survived"),
            "{}",
            describe(&out)
        );
    } else {
        assert_eq!(out.status.signal(), Some(2), "{}", describe(&out));
    }
}

/// Whether this test process ignores `signal` (inherited by what it starts).
fn this_process_ignores(signal: u32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mask = status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .unwrap_or(0);
    mask & (1 << (signal - 1)) != 0
}

#[test]
fn a_missing_command_exits_127() {
    let f = Fixture::new();
    let out = f.run_program(Some(&f.policy()), "no-such-command-spine", &[]);
    assert_eq!(out.status.code(), Some(127), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("spine sandbox: no-such-command-spine:"));
}

#[test]
fn a_bad_policy_exits_126_with_one_line() {
    let out =
        Command::new(env!("CARGO_BIN_EXE_spine-sandbox-exec")).args(["v2.xyz", "--", "true"]).output().expect("run");
    assert_eq!(out.status.code(), Some(126), "{}", describe(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "spine sandbox: not a spine sandbox policy: expected it to start with `v1.`\n"
    );
}

#[test]
fn an_unavailable_layer_fails_unless_best_effort() {
    let f = Fixture::new();
    let caps = spine_sandbox::probe();
    if caps.landlock_abi >= 9 {
        eprintln!("skipped: Landlock ABI {} enforces unix socket paths", caps.landlock_abi);
        return;
    }
    let strict = Policy { allow_unix_sockets: vec![f.tmp.join("x.sock")], ..f.policy() };
    let out = f.sh(Some(&strict), "echo ran");
    assert_eq!(out.status.code(), Some(126), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("spine sandbox: cannot confine the command: landlock-unix: unavailable:"), "{stderr}");
    assert!(out.stdout.is_empty(), "the command never runs unconfined");

    let lenient = Policy { best_effort: true, ..strict };
    let out = f.sh(Some(&lenient), "echo ran");
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
}

#[test]
fn the_profile_names_the_layers_in_force() {
    let f = Fixture::new();
    let mut command = helper().command(&f.policy(), "true", Vec::<&str>::new());
    let out = command.env("SPINE_SANDBOX_REPORT", "1").output().expect("run");
    assert!(out.status.success(), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let abi = spine_sandbox::probe().landlock_abi;
    let expected = format!("spine sandbox: profile workspace-write,net=off,landlock-v{abi},seccomp,userns");
    assert!(stderr.lines().next().is_some_and(|line| line.starts_with(&expected)), "{stderr}");
}

#[test]
fn probe_reports_this_kernel() {
    let caps = probe_with(&helper());
    eprintln!("probe: {}", caps.summary());
    eprintln!("probe: {}", serde_json::to_string(&caps).expect("json"));
    assert!(caps.seccomp.is_available(), "{caps:?}");
    assert!(caps.landlock_abi >= 1, "{caps:?}");
    assert!(caps.user_namespaces.is_available(), "{caps:?}");
}

/// `cargo test -p spine-llm-sandbox --release --test suite -- --ignored --nocapture spawn_cost`
#[test]
#[ignore = "a measurement, not a check"]
fn spawn_cost_of_sh_true_confined_vs_bare() {
    const RUNS: u32 = 200;
    let f = Fixture::new();
    let policy = f.policy();
    let time = |confined: bool| {
        let start = Instant::now();
        for _ in 0..RUNS {
            let out = f.sh(confined.then_some(&policy), "true");
            assert!(out.status.success(), "{}", describe(&out));
        }
        start.elapsed() / RUNS
    };
    let bare: Duration = time(false);
    let confined: Duration = time(true);
    println!(
        "sh -c true x{RUNS}: bare {bare:?} per run, confined {confined:?} per run (+{:?})",
        confined.saturating_sub(bare)
    );
}

/// What each phase of the helper costs (`SPINE_SANDBOX_TIMING`), medians over many runs of
/// `bash -c true` under the fixture's policy, and what the exec of the helper itself costs:
/// this package's small binary, and spine's (`SPINE_BINARY=target/release/spine`) if given.
///
/// `cargo test -p spine-llm-sandbox --release --test suite -- --ignored --nocapture phase_costs`
#[test]
#[ignore = "a measurement, not a check"]
fn phase_costs_of_one_confined_bash_true() {
    const RUNS: usize = 200;
    let f = Fixture::new();
    let policy = f.policy();
    let mut phases: Vec<(String, Vec<u128>)> = Vec::new();
    let (mut bare, mut confined) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let started = Instant::now();
        let out = f.run_program(None, "bash", &["-c", "true"]);
        bare.push(started.elapsed().as_micros());
        assert!(out.status.success(), "{}", describe(&out));
        let mut command = helper().command(&policy, "bash", ["-c", "true"]);
        let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_nanos();
        command.current_dir(&f.ws).env(TIMING_VARIABLE, since_epoch.to_string());
        let started = Instant::now();
        let out = command.output().expect("run");
        confined.push(started.elapsed().as_micros());
        let stderr = String::from_utf8_lossy(&out.stderr);
        let line = stderr.lines().find(|line| line.starts_with("spine sandbox: timing"));
        let Some(line) = line.filter(|_| out.status.success()) else { panic!("{}", describe(&out)) };
        for (phase, micros) in line.split(' ').filter_map(|field| field.split_once('=')) {
            let micros: u128 = micros.parse().expect("µs");
            match phases.iter_mut().find(|(name, _)| name == phase) {
                Some((_, values)) => values.push(micros),
                None => phases.push((phase.to_owned(), vec![micros])),
            }
        }
    }
    println!("bash -c true x{RUNS}: bare {} µs, confined {} µs (medians)", median(&mut bare), median(&mut confined));
    for (phase, values) in &mut phases {
        println!("  {phase:<48} {:>6} µs", median(values));
    }

    // The exec of a helper alone: a policy that does not decode ends it at once.
    let exec = |program: &str, prefix: &[&str]| {
        let mut runs: Vec<u128> = (0..RUNS)
            .map(|_| {
                let started = Instant::now();
                let out = Command::new(program).args(prefix).args(["v0.", "--", "true"]).output().expect("run");
                assert_eq!(out.status.code(), Some(126), "{}", describe(&out));
                started.elapsed().as_micros()
            })
            .collect();
        println!("exec of {program} {}: {} µs (median, to its exit)", prefix.join(" "), median(&mut runs));
    };
    exec(env!("CARGO_BIN_EXE_spine-sandbox-exec"), &[]);
    if let Ok(spine) = std::env::var("SPINE_BINARY") {
        exec(&spine, &[spine_sandbox::SPINE_SUBCOMMAND]);
    }
}

fn median(values: &mut [u128]) -> u128 {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or(0)
}

/// Runs the helper where user namespaces cannot be created: inside a throw-away user
/// namespace whose `user.max_user_namespaces` is 0.
fn without_user_namespaces(policy: &Policy, script: &str) -> Option<std::process::Output> {
    if !crate::common::on_path("unshare") {
        eprintln!("skipped: unshare is not installed");
        return None;
    }
    let (program, argv) = helper().wrap(policy, "sh", ["-c", script]);
    let mut command = Command::new("unshare");
    command
        .args(["-Ur", "sh", "-c", "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"", "sh"])
        .arg(program)
        .args(argv)
        .env("SPINE_SANDBOX_REPORT", "1");
    Some(command.output().expect("run"))
}

#[test]
fn without_user_namespaces_a_strict_policy_fails_and_best_effort_degrades() {
    let f = Fixture::new();
    let script = format!("cat {}/.ssh/id_ed25519; echo x > {}", f.home.display(), f.outside.display());
    let Some(strict) = without_user_namespaces(&f.policy(), &script) else { return };
    assert_eq!(strict.status.code(), Some(126), "{}", describe(&strict));
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert!(stderr.contains("cannot confine the command: userns: unavailable: the user namespace limit"), "{stderr}");

    let lenient = Policy { best_effort: true, ..f.policy() };
    let Some(out) = without_user_namespaces(&lenient, &script) else { return };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(",missing=userns+mounts"), "{}", describe(&out));
    // Network off with no socket allowed needs no namespace where Landlock scopes abstract
    // unix sockets (ABI 6); elsewhere the namespace is missing too.
    let scoped = spine_sandbox::probe().landlock_abi >= 6;
    assert_eq!(stderr.contains("netns"), !scoped, "{}", describe(&out));
    assert!(stderr.contains("sandbox layer mounts is not in force: needs a user namespace"), "{stderr}");
    // Landlock and seccomp still hold: the write outside fails; the hidden file is readable.
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(!f.outside.exists());
    assert!(String::from_utf8_lossy(&out.stdout).contains("PRIVATE KEY"), "{}", describe(&out));
}

#[test]
fn the_command_starts_with_the_callers_signal_mask_and_dispositions() {
    let f = Fixture::new();
    let script = "grep -E '^(SigBlk|SigIgn)' /proc/self/status";
    let confined = f.sh(Some(&f.policy()), script);
    let bare = f.sh(None, script);
    assert!(confined.status.success(), "{}", describe(&confined));
    assert_eq!(String::from_utf8_lossy(&confined.stdout), String::from_utf8_lossy(&bare.stdout));
}

#[test]
fn a_group_signal_ends_the_command_and_the_helper_reports_it() {
    let f = Fixture::new();
    let mut command = helper().command(&f.policy(), "sleep", ["30"]);
    command.current_dir(&f.ws).process_group(0);
    let mut child = command.spawn().expect("spawn");
    std::thread::sleep(Duration::from_millis(300));
    let group = nix::unistd::Pid::from_raw(-i32::try_from(child.id()).expect("pid"));
    // SIGTERM: the one of the helper's caught signals a caller never leaves ignored here.
    nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGTERM).expect("kill");
    let started = Instant::now();
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(15), "{status}");
    assert!(started.elapsed() < Duration::from_secs(5), "sleep ended with the group signal");
}

/// The pid `sh -c 'echo $$'` reports under `policy`, and the pid the caller started.
fn shell_pid_and_started_pid(f: &Fixture, policy: &Policy) -> (String, String) {
    let mut command = helper().command(policy, "sh", ["-c", "echo $$"]);
    command.current_dir(&f.ws).stdout(std::process::Stdio::piped());
    let child = command.spawn().expect("spawn");
    let started = child.id().to_string();
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{}", describe(&out));
    (String::from_utf8_lossy(&out.stdout).trim().to_owned(), started)
}

#[test]
fn a_helper_whose_caller_undoes_execs_the_command_in_its_place() {
    let f = Fixture::new();
    let in_place = Policy { caller_undoes: true, ..f.policy() };
    let (shell, started) = shell_pid_and_started_pid(&f, &in_place);
    assert_eq!(shell, started, "the command is the process the caller started");
    // The helper that undoes protected paths itself stays, the command its child.
    let (shell, started) = shell_pid_and_started_pid(&f, &f.policy());
    assert_ne!(shell, started, "the helper stays to undo after the command");
    // In place, the command's code, its signal and a missing command end the helper as before.
    assert_eq!(f.sh(Some(&in_place), "exit 7").status.code(), Some(7));
    assert_eq!(f.sh(Some(&in_place), "kill -TERM $$; sleep 5").status.signal(), Some(15));
    let missing = f.run_program(Some(&in_place), "no-such-command-spine", &[]);
    assert_eq!(missing.status.code(), Some(127), "{}", describe(&missing));
    assert!(String::from_utf8_lossy(&missing.stderr).starts_with("spine sandbox: no-such-command-spine:"));
}

#[test]
fn a_helper_in_place_is_confined_like_one_that_stays() {
    let f = Fixture::new();
    let in_place = Policy { caller_undoes: true, ..f.policy() };
    f.denied_then_allowed(&in_place, &format!("echo x > {}", f.outside.display()), "Permission denied");
    f.denied_then_allowed(&in_place, &format!("cat {}/.ssh/id_ed25519", f.home.display()), "");
}
