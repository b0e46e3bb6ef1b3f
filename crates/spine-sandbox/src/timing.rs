//! What each phase of the helper costs: with [`TIMING_VARIABLE`] set, the helper prints one
//! line `spine sandbox: timing (µs) PHASE=N …` on stderr after the command has ended.
//!
//! Contract: off (the variable unset), a [`Timing`] records nothing and reads no clock. On,
//! each [`mark`](Timing::mark) records the microseconds since the previous mark under its
//! name, in order; the line ends with `total=`, from the helper's `main` to the report. When
//! the variable holds a number, it is taken as the wall-clock time (nanoseconds since the
//! Unix epoch, as Python's `time.time_ns()` gives it) at which the caller started the helper,
//! and the line begins with `exec=`: the time from then to the helper's `main` (the exec of
//! the helper's binary, its loading and relocation).

use std::fmt::Write as _;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Set in the helper's environment to print the cost of each phase on stderr.
pub const TIMING_VARIABLE: &str = "SPINE_SANDBOX_TIMING";

/// The phases of one helper run, when timing is on.
#[derive(Debug, Default)]
pub(crate) struct Timing {
    clock: Option<Clock>,
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
        let Some(value) = std::env::var_os(TIMING_VARIABLE) else { return Self::default() };
        let now = Instant::now();
        let mut phases = Vec::new();
        let spawned = value.to_str().and_then(|value| value.trim().parse::<u128>().ok()).filter(|ns| *ns > 1);
        if let (Some(spawned), Ok(since_epoch)) = (spawned, SystemTime::now().duration_since(UNIX_EPOCH)) {
            let exec = since_epoch.as_nanos().saturating_sub(spawned);
            phases.push(("exec".to_owned(), Duration::from_nanos(u64::try_from(exec).unwrap_or(u64::MAX))));
        }
        Self { clock: Some(Clock { start: now, last: now, phases }) }
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
        let mut on = Timing { clock: Some(Clock { start: now, last: now, phases: Vec::new() }) };
        on.mark("userns");
        on.mark_with(|| "mount:/dev/shm".to_owned());
        let report = on.report().expect("on");
        assert!(report.starts_with("spine sandbox: timing (µs) userns="), "{report}");
        assert!(report.contains(" mount:/dev/shm=") && report.contains(" total="), "{report}");
    }
}
