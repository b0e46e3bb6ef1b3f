//! Namespaces, mounts and ptrace are refused to the command.

use crate::common::{Fixture, on_path};

#[test]
fn unshare_is_denied() {
    let f = Fixture::new();
    if !on_path("unshare") {
        eprintln!("skipped: unshare is not installed");
        return;
    }
    f.denied_then_allowed(&f.policy(), "unshare -r true", "unshare");
}

#[test]
fn mount_is_denied() {
    let f = Fixture::new();
    if !on_path("unshare") || !on_path("mount") {
        eprintln!("skipped: unshare or mount is not installed");
        return;
    }
    std::fs::create_dir_all(f.ws.join("mnt")).expect("mkdir");
    // Bare, the mount happens in a throw-away namespace (never on the machine); confined,
    // both the namespace and a direct mount are refused.
    f.denied_then_allowed(&f.policy(), "unshare -rm mount -t tmpfs none mnt", "unshare");
    let direct = f.sh(Some(&f.policy()), "mount -t tmpfs none mnt");
    assert!(!direct.status.success(), "{}", crate::common::describe(&direct));
}

#[test]
fn ptrace_is_denied() {
    let f = Fixture::new();
    if on_path("strace") {
        f.denied_then_allowed(&f.policy(), "strace -f -o /dev/null true", "strace");
        return;
    }
    let Some(python) = crate::common::python() else { return };
    eprintln!("strace is not installed: trying ptrace through python ctypes");
    let script = format!(
        "{python} -c \"import ctypes, os, sys; libc=ctypes.CDLL(None, use_errno=True); \
         pid=os.fork(); \
         (os.kill(os.getpid(), 19) if pid == 0 else None); \
         r=libc.ptrace(16, pid, 0, 0); e=ctypes.get_errno(); os.kill(pid, 9); \
         sys.exit('ptrace: ' + os.strerror(e) if r != 0 else 0)\""
    );
    f.denied_then_allowed(&f.policy(), &script, "ptrace: Operation not permitted");
}
