//! What each phase of the helper costs: with [`TIMING_VARIABLE`] set, the helper prints one
//! line `spine sandbox: timing (µs) PHASE=N …` on stderr after the command has ended.
//!
//! Contract: off (the variable unset), a [`Timing`] records nothing and reads no clock. On,
//! each [`mark`](Timing::mark) records the microseconds since the previous mark under its
//! name, in order; the line ends with `total=`, from the helper's `main` to the report. When
//! the variable holds a number, it is taken as the wall-clock time (nanoseconds since the
//! Unix epoch, as Python's `time.time_ns()` gives it) at which the caller started the helper,
//! and the line begins with `exec=`: the time from then to the helper's `main` (the exec of
//! the helper's binary, its loading and relocation). A value that begins with `exec` (`exec`,
//! `exec:NS`, NS as above) asks for the phases up to the helper's exec of the command in its
//! place, when it execs: the line is then printed just before that exec.

use std::fmt::Write as _;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Set in the helper's environment to print the cost of each phase on stderr.
pub const TIMING_VARIABLE: &str = "SPINE_SANDBOX_TIMING";

/// The phases of one helper run, when timing is on.
#[derive(Debug, Default)]
pub(crate) struct Timing {
    clock: Option<Clock>,
    /// The variable asked for the phases up to an exec in place (`exec`).
    before_exec: bool,
}

#[derive(Debug)]
struct Clock {
    start: Instant,
    last: Instant,
    phases: Vec<(String, Duration)>,
}

impl Timing {
    /// Timing as [`TIMING_VARIABLE`] asks: off when it is unset.
    pub(crate) fn from_env() -> Self {
        Self::from_value(std::env::var_os(TIMING_VARIABLE).as_deref())
    }

    /// Timing as the variable's `value` asks (`None`: unset).
    fn from_value(value: Option<&std::ffi::OsStr>) -> Self {
        let Some(value) = value else { return Self::default() };
        let now = Instant::now();
        let text = value.to_str().unwrap_or_default();
        let (before_exec, text) = match text.strip_prefix("exec") {
            Some(rest) => (true, rest.trim_start_matches(':')),
            None => (false, text),
        };
        let mut phases = Vec::new();
        let spawned = text.trim().parse::<u128>().ok().filter(|ns| *ns > 1);
        if let (Some(spawned), Ok(since_epoch)) = (spawned, SystemTime::now().duration_since(UNIX_EPOCH)) {
            let exec = since_epoch.as_nanos().saturating_sub(spawned);
            phases.push(("exec".to_owned(), Duration::from_nanos(u64::try_from(exec).unwrap_or(u64::MAX))));
        }
        Self { clock: Some(Clock { start: now, last: now, phases }), before_exec }
    }

    /// Whether the helper may exec the command in its place: timing is off, or asks for the
    /// phases up to that exec.
    pub(crate) fn allows_exec(&self) -> bool {
        self.clock.is_none() || self.before_exec
    }

    /// Records the time since the previous mark as `phase`.
    pub(crate) fn mark(&mut self, phase: &str) {
        self.mark_with(|| phase.to_owned());
    }

    /// [`mark`](Self::mark) with a name built only when timing is on.
    pub(crate) fn mark_with(&mut self, phase: impl FnOnce() -> String) {
        if let Some(clock) = &mut self.clock {
            let now = Instant::now();
            clock.phases.push((phase(), now - clock.last));
            clock.last = now;
        }
    }

    /// The report line, when timing is on.
    pub(crate) fn report(&self) -> Option<String> {
        let clock = self.clock.as_ref()?;
        let mut line = "spine sandbox: timing (µs)".to_owned();
        for (phase, took) in &clock.phases {
            let _ = write!(line, " {phase}={}", took.as_micros());
        }
        let _ = write!(line, " total={}", clock.start.elapsed().as_micros());
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_records_nothing_and_on_lists_phases_in_order() {
        let mut off = Timing::default();
        off.mark("userns");
        assert_eq!(off.report(), None);

        let now = Instant::now();
        let mut on = Timing { clock: Some(Clock { start: now, last: now, phases: Vec::new() }), before_exec: false };
        on.mark("userns");
        on.mark_with(|| "mount:/dev/shm".to_owned());
        let report = on.report().expect("on");
        assert!(report.starts_with("spine sandbox: timing (µs) userns="), "{report}");
        assert!(report.contains(" mount:/dev/shm=") && report.contains(" total="), "{report}");
    }

    #[test]
    fn a_value_beginning_with_exec_allows_the_exec_in_place_and_keeps_the_start_time() {
        use std::ffi::OsStr;
        assert!(Timing::from_value(None).allows_exec(), "off");
        assert!(!Timing::from_value(Some(OsStr::new("1"))).allows_exec(), "on: the helper stays to report");
        assert!(Timing::from_value(Some(OsStr::new("exec"))).allows_exec());
        let started = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_nanos();
        let timing = Timing::from_value(Some(OsStr::new(&format!("exec:{started}"))));
        assert!(timing.allows_exec());
        let report = timing.report().expect("on");
        assert!(report.starts_with("spine sandbox: timing (µs) exec="), "{report}");
    }
}
