//! Escape attempts through the `spine` binary: each is a Bash call of the scripted model under
//! `--sandbox workspace-write` that must fail there and, where that makes sense, succeeds with
//! `--sandbox off`, so the sandbox is what refused. Each test is named after the rule it pins.
//! (`git init`, `git add` and `git commit` inside the sandbox, the allowed path, are
//! `sandbox_use::building_committing_and_temporary_files_work_inside_the_sandbox`'s.)
//!
//! The C programs are built with `cc`, the linker every Rust build of this suite already runs
//! (with the C library's headers beside it), so it is there wherever these tests are built.

use std::net::UdpSocket;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::sandbox::{assert_ran, assert_refused, bash};
use crate::support::*;

const SANDBOXED: &[&str] = &["--sandbox", "workspace-write"];
const UNSANDBOXED: &[&str] = &["--sandbox", "off"];

/// Prints its effective uid; with a path, opens it for writing and writes `escaped`.
const PROGRAM: &str = r#"#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    printf("euid=%d\n", (int)geteuid());
    fflush(stdout);
    if (argc < 2) return 0;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    if (write(fd, "escaped\n", 8) != 8) return 1;
    return close(fd);
}
"#;

/// The command failed and its output says `text`.
fn assert_failed(result: &str, text: &str) {
    assert!(result.starts_with("Error [command_failed]"), "the command failed: {result}");
    assert!(result.contains(text), "{text:?} in: {result}");
}

pub(crate) fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
}

/// Whether this test runs as root (`id -u`).
fn root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| stdout(&o).trim() == "0")
}

/// `cc -o out source`, which must build.
fn compile(source: &Path, out: &Path) {
    let built = Command::new("cc").arg("-o").arg(out).arg(source).output().expect("cc (this build's linker) runs");
    assert!(built.status.success(), "cc: {}", stderr(&built));
}

/// Waits (at most 30 s: a liveness bound, not a timing assertion) until process `pid` has ended
/// (gone, or a zombie awaiting its reaper); false when it still runs then.
fn ends(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rfind(')').and_then(|end| stat[end + 1..].split_whitespace().next());
        if matches!(state, None | Some("Z" | "X")) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_compiled_program_cannot_write_outside_the_workspace() {
    let s = Sandbox::new();
    s.write("escape.c", PROGRAM);
    let outside = s.dir.path().join("outside.txt");
    // Built inside the sandbox too: the compiler's temporary files go to the private $TMPDIR.
    let command = format!("cc -o escape escape.c && ./escape {}", outside.display());
    let (_, refused) = bash(&s, &[&command], SANDBOXED);
    assert_refused(&refused[0], "write outside the workspace");
    assert!(refused[0].contains(&format!("{}: Permission denied", outside.display())), "{}", refused[0]);
    assert!(s.project().join("escape").exists(), "it was built in the workspace");
    assert!(!outside.exists(), "nothing was written outside");
    let (_, ran) = bash(&s, &[&command], UNSANDBOXED);
    assert_ran(&ran[0]);
    assert_eq!(std::fs::read_to_string(&outside).expect("written"), "escaped\n");
}

/// Landlock checks the path a file is opened by, not where else the file is linked: a hard link
/// into the workspace made before the session *is* a workspace path, and writing through it
/// changes the file outside (pinned here: that link is the user's doing). What a command cannot
/// do is make such a link itself: `ln /outside/file ./link` fails with `EXDEV` ("Invalid
/// cross-device link"), Landlock's refer rule (a link must not give a file more access than it
/// has where it is).
#[test]
fn a_command_cannot_hard_link_a_file_outside_into_the_workspace() {
    let s = Sandbox::new();
    let outside = s.dir.path().join("outside.txt");
    std::fs::write(&outside, "original\n").expect("outside");
    let made_before = match std::fs::hard_link(&outside, s.project().join("linked-before.txt")) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("no link made before the session: this filesystem refuses hard links ({e})");
            false
        }
    };
    let link = format!("ln {} made.txt && echo changed >> made.txt", outside.display());
    let mut commands = vec![link.as_str()];
    if made_before {
        commands.push("echo through-the-old-link >> linked-before.txt");
    }
    let (_, results) = bash(&s, &commands, SANDBOXED);
    assert_failed(&results[0], "Invalid cross-device link");
    assert!(!s.project().join("made.txt").exists(), "no link was made");
    let expected = if made_before {
        assert_ran(&results[1]);
        "original\nthrough-the-old-link\n"
    } else {
        "original\n"
    };
    assert_eq!(std::fs::read_to_string(&outside).expect("read"), expected);
    let (_, ran) = bash(&s, &[&link], UNSANDBOXED);
    assert_ran(&ran[0]);
    assert_eq!(std::fs::read_to_string(&outside).expect("read"), format!("{expected}changed\n"));
}

/// A program owned by `nobody` with the setuid bit runs as `nobody` outside the sandbox; inside
/// (`no_new_privs`, which `/proc/self/status` shows) it keeps the caller's uid, and its write
/// outside is refused. Only root can give a file another owner, so the test needs root.
#[test]
fn a_setuid_program_gains_nothing_because_commands_run_with_no_new_privs() {
    if !root() {
        eprintln!("skipped: only root can make a program owned by another user to setuid to");
        return;
    }
    let s = Sandbox::new();
    let nobody = Command::new("id").args(["-u", "nobody"]).output().expect("id");
    assert!(nobody.status.success(), "a user nobody: {}", stderr(&nobody));
    let nobody: u32 = stdout(&nobody).trim().parse().expect("a uid");
    let source = s.dir.path().join("probe.c");
    std::fs::write(&source, PROGRAM).expect("source");
    let probe = s.project().join("probe");
    compile(&source, &probe);
    let chown = Command::new("chown").arg("nobody").arg(&probe).output().expect("chown");
    assert!(chown.status.success(), "{}", stderr(&chown));
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o4755)).expect("setuid bit");
    let bare = Command::new(&probe).output().expect("the probe runs");
    if stdout(&bare).trim() != format!("euid={nobody}") {
        eprintln!("skipped: setuid has no effect here (a nosuid mount or no_new_privs): {}", stdout(&bare));
        return;
    }
    // nobody can reach and write `drop`, so only the sandbox refuses the write there.
    std::fs::set_permissions(s.dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let drop = s.dir.path().join("drop");
    std::fs::create_dir(&drop).expect("drop");
    std::fs::set_permissions(&drop, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let target = drop.join("written.txt");
    let run = format!("./probe {}", target.display());
    let commands = [run.as_str(), "grep NoNewPrivs /proc/self/status"];

    let (_, refused) = bash(&s, &commands, SANDBOXED);
    assert_refused(&refused[0], "write outside the workspace");
    assert!(refused[0].lines().any(|l| l == "euid=0"), "the caller's uid, not the owner's: {}", refused[0]);
    assert!(refused[1].contains("NoNewPrivs:\t1"), "{}", refused[1]);
    assert!(!target.exists(), "nothing was written outside");

    let (_, ran) = bash(&s, &commands, UNSANDBOXED);
    assert_ran(&ran[0]);
    assert!(ran[0].lines().any(|l| l == format!("euid={nobody}")), "{}", ran[0]);
    assert!(ran[1].contains("NoNewPrivs:\t0"), "{}", ran[1]);
    assert_eq!(std::fs::metadata(&target).expect("written").uid(), nobody, "written as nobody");
}

#[test]
fn creating_namespaces_is_refused_to_unshare_and_to_the_system_call() {
    if !on_path("unshare") {
        eprintln!("skipped: unshare is not installed");
        return;
    }
    let s = Sandbox::new();
    // A network namespace alone needs root outside the sandbox; with a user namespace, not.
    let net = if root() { "unshare -n true" } else { "unshare -rn true" };
    let call = "python3 -c \"import ctypes, os, sys; libc = ctypes.CDLL(None, use_errno=True); \
                sys.exit('unshare: ' + os.strerror(ctypes.get_errno()) if libc.unshare(0x10000000) else 0)\"";
    let commands = ["unshare -r true", net, call];
    let (_, refused) = bash(&s, &commands, SANDBOXED);
    for result in &refused {
        assert_failed(result, "Operation not permitted");
    }
    let (_, ran) = bash(&s, &commands, UNSANDBOXED);
    for result in &ran {
        assert_ran(result);
    }
}

#[test]
fn mounting_is_refused_directly_and_in_a_namespace_of_its_own() {
    if !on_path("unshare") || !on_path("mount") {
        eprintln!("skipped: unshare or mount is not installed");
        return;
    }
    let s = Sandbox::new();
    let direct = "mkdir -p \"$TMPDIR/x\" && mount -t tmpfs none \"$TMPDIR/x\" && echo MOUNTED-IT";
    // Outside the sandbox this mounts in a throw-away namespace, never on the machine.
    let private = "mkdir -p mnt && unshare -rm mount -t tmpfs none mnt && echo MOUNTED-IT";
    let (_, refused) = bash(&s, &[direct, private], SANDBOXED);
    assert_failed(&refused[0], "mount");
    assert_failed(&refused[1], "Operation not permitted");
    assert!(refused.iter().all(|r| !r.contains("MOUNTED-IT")), "{refused:?}");
    let (_, ran) = bash(&s, &[private], UNSANDBOXED);
    assert_ran(&ran[0]);
    assert!(ran[0].contains("MOUNTED-IT"), "{}", ran[0]);
}

#[test]
fn tracing_a_process_is_refused() {
    let s = Sandbox::new();
    // A child stops itself; its parent attaches to it (PTRACE_ATTACH) and kills it.
    let attach = "python3 -c \"import ctypes, os, sys; libc = ctypes.CDLL(None, use_errno=True); \
                  pid = os.fork(); pid or os.kill(os.getpid(), 19); \
                  r = libc.ptrace(16, pid, 0, 0); e = ctypes.get_errno(); os.kill(pid, 9); \
                  sys.exit('ptrace: ' + os.strerror(e) if r else 0)\"";
    let mut commands = vec![attach];
    if on_path("strace") {
        commands.push("strace -f -o /dev/null true");
    } else {
        eprintln!("strace is not installed: only the ptrace system call is tried");
    }
    let (_, refused) = bash(&s, &commands, SANDBOXED);
    assert_failed(&refused[0], "ptrace: Operation not permitted");
    if let Some(strace) = refused.get(1) {
        assert_failed(strace, "Operation not permitted");
    }
    let (_, ran) = bash(&s, &commands, UNSANDBOXED);
    for result in &ran {
        assert_ran(result);
    }
}

/// What a command leaves running when its call ends: a background child (`… & disown`) is in
/// the call's process group, which spine ends with the call, so it dies before its delayed
/// write; a daemon in a session of its own (`setsid`) escapes the group and outlives the call —
/// still confined, every write outside refused — until the run ends and spine, the subreaper it
/// was re-parented to, kills it.
#[test]
fn a_process_left_running_dies_with_its_call_or_stays_confined_until_the_run_ends() {
    if !on_path("setsid") {
        eprintln!("skipped: setsid is not installed");
        return;
    }
    let s = Sandbox::new();
    let late = s.dir.path().join("late-background.txt");
    let from_daemon = s.dir.path().join("late-daemon.txt");
    let leave = format!(
        "(echo $BASHPID > background.pid; sleep 2; echo woke > background.log; touch {}) >/dev/null 2>&1 & disown; \
         setsid sh -c 'echo $$ > daemon.pid; while :; do touch {} 2>/dev/null && echo wrote >> daemon.log \
         || echo refused >> daemon.log; sleep 0.1; done' >/dev/null 2>&1 </dev/null & \
         for i in $(seq 600); do [ -s background.pid ] && [ -s daemon.pid ] && break; sleep 0.05; done; echo left",
        late.display(),
        from_daemon.display()
    );
    // The next call: the background child is gone (or a zombie), the daemon still writes lines.
    let check = "s=$(cut -d' ' -f3 /proc/$(cat background.pid)/stat 2>/dev/null); echo \"background: ${s:-gone}\"; \
                 : > daemon.log; for i in $(seq 300); do [ -s daemon.log ] && break; sleep 0.1; done; \
                 echo \"daemon: $(head -n 1 daemon.log)\"";
    let (_, results) = bash(&s, &[&leave, check], SANDBOXED);
    let pid = |name: &str| -> i32 {
        std::fs::read_to_string(s.project().join(name)).expect("pid file").trim().parse().expect("a pid")
    };
    let (background, daemon) = (pid("background.pid"), pid("daemon.pid"));
    // Whatever else fails, nothing this test started outlives it.
    let outlived: Vec<i32> = [background, daemon].into_iter().filter(|pid| !ends(*pid)).collect();
    for pid in &outlived {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    assert!(results[0].contains("left"), "{}", results[0]);
    assert!(
        results[1].contains("background: Z") || results[1].contains("background: gone"),
        "the background child ended with its call: {}",
        results[1]
    );
    assert!(results[1].contains("daemon: refused"), "the daemon outlived its call, confined: {}", results[1]);
    assert!(outlived.is_empty(), "{outlived:?} outlived the run (background {background}, daemon {daemon})");
    assert!(!late.exists() && !from_daemon.exists(), "no write outside landed");
    assert!(!s.project().join("background.log").exists(), "the background child never woke");
}

/// A datagram from `python3` labelled `label`, to 127.0.0.1:`port`.
fn udp_send(port: u16, label: &str) -> String {
    format!(
        "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'{label}', ('127.0.0.1', {port}))\""
    )
}

/// The next datagram `listener` gets (at most 30 s: a liveness bound).
fn next_datagram(listener: &UdpSocket) -> String {
    listener.set_nonblocking(false).expect("blocking");
    listener.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    let mut buffer = [0u8; 64];
    let (n, _) = listener.recv_from(&mut buffer).expect("a datagram arrived");
    String::from_utf8_lossy(&buffer[..n]).into_owned()
}

#[test]
fn udp_to_a_loopback_listener_on_the_machine_never_arrives() {
    let s = Sandbox::new();
    let listener = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (_, refused) = bash(&s, &[&udp_send(port, "sandboxed")], SANDBOXED);
    assert_refused(&refused[0], "network access is off");
    // allowLocalBinding gives commands IP sockets on their own loopback: the datagram leaves,
    // onto a loopback that is not the machine's.
    let local = r#"{"sandbox": {"network": {"allowLocalBinding": true}}}"#;
    let (_, sent) = bash(&s, &[&udp_send(port, "local")], &["--sandbox", "workspace-write", "--settings", local]);
    assert_ran(&sent[0]);
    let (_, ran) = bash(&s, &[&udp_send(port, "unsandboxed")], UNSANDBOXED);
    assert_ran(&ran[0]);
    assert_eq!(next_datagram(&listener), "unsandboxed", "the first datagram to arrive is the unsandboxed one");
}

#[test]
fn raw_sockets_are_refused_even_with_the_whole_network() {
    if !root() {
        eprintln!("skipped: a raw socket needs root outside the sandbox");
        return;
    }
    let s = Sandbox::new();
    let listener = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let raw = "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); \
               print('RAW-SOCKET')\"";
    let whole = r#"{"sandbox": {"network": {"allowedDomains": ["*"]}}}"#;
    let send = udp_send(port, "whole-network");
    let (_, results) = bash(&s, &[raw, &send], &["--sandbox", "workspace-write", "--settings", whole]);
    assert_failed(&results[0], "Operation not permitted");
    assert!(!results[0].contains("RAW-SOCKET"), "{}", results[0]);
    // The network is the machine's: a datagram arrives.
    assert_ran(&results[1]);
    assert_eq!(next_datagram(&listener), "whole-network");
    let (_, ran) = bash(&s, &[raw], UNSANDBOXED);
    assert_ran(&ran[0]);
    assert!(ran[0].contains("RAW-SOCKET"), "{}", ran[0]);
}

/// Types `argv[1]` and Enter into the controlling terminal (`TIOCSTI`).
const TYPE_INTO_THE_TERMINAL: &str = r#"import fcntl, os, sys, termios
fd = os.open("/dev/tty", os.O_RDWR)
for byte in (sys.argv[1] + "\n").encode():
    fcntl.ioctl(fd, termios.TIOCSTI, bytes([byte]))
print("typed")
"#;

/// In a terminal running a shell, `spine run` (the given `--sandbox` mode) whose one Bash call
/// types `touch MARKER` into the terminal; then the shell reads its next line. Whether
/// `marker` exists then: whether the shell ran what the command typed.
fn shell_ran_what_the_command_typed(s: &Sandbox, mode: &str, marker: &Path) -> bool {
    let command = format!("python3 type.py 'touch {}'", marker.display());
    let script = s.script(bash_then_answer(&command));
    let spine = assert_cmd::cargo::cargo_bin("spine");
    let run = s.dir.path().join("run-spine.sh");
    let line = format!(
        "{} run -p go --model {} --permission-mode bypassPermissions --sandbox {mode} >/dev/null 2>&1\n",
        shell_quote(&spine.to_string_lossy()),
        shell_quote(&format!("scripted:{}", script.display())),
    );
    std::fs::write(&run, line).expect("run-spine.sh");
    let shell = format!(
        "env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY SPINE_HOME={} HOME={} PS1='$ ' sh",
        shell_quote(&s.home().to_string_lossy()),
        shell_quote(&s.dir.path().to_string_lossy()),
    );
    let tmux = Tmux::start(&s.project(), &shell);
    tmux.send_line(&format!("sh {}; echo \"ended $?\" | tr a-z A-Z", shell_quote(&run.to_string_lossy())));
    let screen = tmux.wait_for("ENDED ");
    assert!(screen.contains("ENDED 0"), "spine ran: {screen}");
    // The shell reads whatever was typed into the terminal before this line.
    tmux.send_line("echo checked | tr a-z A-Z");
    tmux.wait_for("CHECKED");
    marker.exists()
}

/// What a command types into the terminal spine runs in (`TIOCSTI` on `/dev/tty`, its
/// controlling terminal) is read by whatever reads that terminal next — the user's shell once
/// spine exits, or spine's own prompt — and runs outside the sandbox.
#[test]
fn a_command_cannot_type_into_the_terminal_spine_runs_in() {
    let s = Sandbox::new();
    s.write("type.py", TYPE_INTO_THE_TERMINAL);
    let marker = s.dir.path().join("typed-sandboxed.txt");
    assert!(
        !shell_ran_what_the_command_typed(&s, "workspace-write", &marker),
        "the shell ran `touch {}`, typed into its terminal by a sandboxed command",
        marker.display()
    );
    // Kernels built without legacy TIOCSTI (or with dev.tty.legacy_tiocsti = 0) refuse it to
    // everyone: the control run would show nothing then.
    let legacy = std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti").unwrap_or_default();
    if legacy.trim() == "0" {
        eprintln!("no control run: this kernel refuses TIOCSTI to every unprivileged process");
        return;
    }
    let unconfined = s.dir.path().join("typed-unsandboxed.txt");
    assert!(shell_ran_what_the_command_typed(&s, "off", &unconfined), "the typing works outside the sandbox");
}

/// `git ARGS` in the project, as its user runs it (outside the sandbox, no system or global
/// configuration).
fn git(s: &Sandbox, args: &[&str]) -> Output {
    Command::new("git")
        .args(args)
        .current_dir(s.project())
        .env("HOME", s.dir.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs")
}

/// A repository with one commit in the project; then `plant.sh`, which moves its configuration
/// to `elsewhere/`, whose `core.fsmonitor` touches `marker` (git runs it on `git status`).
fn repository_and_plant(s: &Sandbox, marker: &Path) {
    let commit = ["-c", "user.email=a@b", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "one"];
    for args in [&["init", "-q"][..], &commit[..]] {
        let out = git(s, args);
        assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    }
    s.write(
        "plant.sh",
        &format!(
            "cp -r .git elsewhere && rm -rf elsewhere/hooks\n\
             printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \"touch {}; false\"\\n' > elsewhere/config\n\
             echo ../elsewhere > .git/commondir\n",
            marker.display()
        ),
    );
}

/// `.git/config` and `.git/hooks` are protected because git runs what they configure later,
/// outside the sandbox. A repository's `.git/commondir` file moves both: git then reads the
/// configuration (and hooks) of the directory it names. A command that writes it (from a
/// script, where the permission rules cannot see) must not get the user's next `git status` to
/// run its `core.fsmonitor`.
#[test]
fn a_command_cannot_move_the_repositorys_protected_configuration_through_commondir() {
    let s = Sandbox::new();
    let marker = s.dir.path().join("ran-by-git.txt");
    repository_and_plant(&s, &marker);
    let (_, results) = bash(&s, &["sh plant.sh"], SANDBOXED);
    // Then the user runs git in the project, outside the sandbox.
    let status = git(&s, &["status", "--short"]);
    assert!(
        !marker.exists(),
        "the user's `git status` ran what a sandboxed command configured through .git/commondir: {}\n{}",
        results[0],
        stderr(&status)
    );
    let control = Sandbox::new();
    let unconfined = control.dir.path().join("ran-by-git.txt");
    repository_and_plant(&control, &unconfined);
    let (_, ran) = bash(&control, &["sh plant.sh"], UNSANDBOXED);
    assert_ran(&ran[0]);
    let status = git(&control, &["status", "--short"]);
    assert!(unconfined.exists(), "the same plant works outside the sandbox: {}", stderr(&status));
}
