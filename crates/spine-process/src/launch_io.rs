//! The launched path of [`GroupChild::spawn_io`](crate::GroupChild::spawn_io): the user's
//! command read back from the launcher line, its environment made whole, its standard streams
//! opened as descriptors (pipes whose other ends this process keeps), then handed to the
//! confinement's [`Launch`].

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};

use crate::confine::Confine;
use crate::launch::{ChildIo, IoEnd, Launch, LaunchCommand, LaunchedChild, command_environment};

/// A command the launcher started, with this process's ends of its pipes.
pub(crate) struct Started {
    pub(crate) child: LaunchedChild,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: Option<ChildStdout>,
    pub(crate) stderr: Option<ChildStderr>,
}

pub(crate) enum Outcome {
    Started(Started),
    /// The command may have started; it is not started again.
    Failed(io::Error),
    /// The launcher declined: the streams, as given, for the usual spawn.
    NotThisWay(ChildIo),
}

/// One stream: the child's descriptor, this process's end of a pipe, and what was asked.
struct End {
    child: OwnedFd,
    ours: Option<OwnedFd>,
    asked: Asked,
}

enum Asked {
    Null,
    Piped,
    Fd,
}

impl End {
    /// `end` as descriptors; `input` is the child's stdin (it reads).
    fn open(end: IoEnd, input: bool) -> io::Result<End> {
        Ok(match end {
            IoEnd::Null => {
                let null = std::fs::OpenOptions::new().read(input).write(!input).open("/dev/null")?;
                End { child: null.into(), ours: None, asked: Asked::Null }
            }
            IoEnd::Piped => {
                let (reader, writer) = std::io::pipe()?;
                let (child, ours): (OwnedFd, OwnedFd) =
                    if input { (reader.into(), writer.into()) } else { (writer.into(), reader.into()) };
                End { child, ours: Some(ours), asked: Asked::Piped }
            }
            IoEnd::Fd(fd) => End { child: fd, ours: None, asked: Asked::Fd },
        })
    }

    /// The stream as it was asked for (a pipe made for it is closed).
    fn back(self) -> IoEnd {
        match self.asked {
            Asked::Null => IoEnd::Null,
            Asked::Piped => IoEnd::Piped,
            Asked::Fd => IoEnd::Fd(self.child),
        }
    }
}

/// Starts `command` (built by `ChildEnv::command`, its environment applied) through
/// `launcher`.
pub(crate) fn launch(launcher: &dyn Launch, confinement: &dyn Confine, command: &Command, io: ChildIo) -> Outcome {
    let std = command.as_std();
    // The user's program and arguments follow the launcher's prefix (checked by the caller).
    let mut args = std.get_args().skip(confinement.prefix().len()).map(ToOwned::to_owned);
    let Some(program) = args.next() else { return Outcome::NotThisWay(io) };
    let cwd = match std.get_current_dir() {
        Some(dir) => dir.to_path_buf(),
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(_) => return Outcome::NotThisWay(io),
        },
    };
    let request = LaunchCommand { program, args: args.collect(), env: command_environment(std), cwd };
    let ChildIo { stdin, stdout, stderr } = io;
    let ends =
        (|| Ok::<_, io::Error>([End::open(stdin, true)?, End::open(stdout, false)?, End::open(stderr, false)?]))();
    let [stdin, stdout, stderr] = match ends {
        Ok(ends) => ends,
        Err(error) => return Outcome::Failed(error),
    };
    let launched = launcher.launch(request, [stdin.child.as_fd(), stdout.child.as_fd(), stderr.child.as_fd()]);
    let child = match launched {
        None => {
            return Outcome::NotThisWay(ChildIo { stdin: stdin.back(), stdout: stdout.back(), stderr: stderr.back() });
        }
        Some(Err(error)) => return Outcome::Failed(error),
        Some(Ok(child)) => child,
    };
    // The child has its own copies now; this process keeps only its ends of the pipes.
    let ours = |end: End| end.ours;
    let converted = (|| {
        let stdin = ours(stdin).map(|fd| ChildStdin::from_std(std::process::ChildStdin::from(fd))).transpose()?;
        let stdout = ours(stdout).map(|fd| ChildStdout::from_std(std::process::ChildStdout::from(fd))).transpose()?;
        let stderr = ours(stderr).map(|fd| ChildStderr::from_std(std::process::ChildStderr::from(fd))).transpose()?;
        Ok::<_, io::Error>((stdin, stdout, stderr))
    })();
    match converted {
        Ok((stdin, stdout, stderr)) => Outcome::Started(Started { child, stdin, stdout, stderr }),
        Err(error) => {
            if let Some(pid) = child.pid.and_then(|pid| i32::try_from(pid).ok()) {
                let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            }
            Outcome::Failed(error)
        }
    }
}
