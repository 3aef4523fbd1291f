//! How busy the machine is around a benchmark, so that rates measured while other work
//! shares the cores are not read as a regression: the 1-minute load average against the
//! CPU count (`/proc/loadavg`), and the CPU time other processes take during a measurement
//! (`/proc/stat` for the whole machine minus `/proc/self/stat` for this process). Linux
//! only; elsewhere every figure is unknown (`None`).

use serde::Serialize;

/// Share of the machine's CPUs other processes may keep busy before a run counts as busy.
const BUSY_SHARE: f64 = 0.25;

/// The machine's load before a benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MachineLoad {
    /// CPUs of the machine (those `/proc/stat` counts; else those this process may use).
    pub cpus: usize,
    /// Threads the benchmark runs on.
    pub threads: usize,
    /// Runnable and waiting tasks, averaged over the last minute.
    pub load_1min: Option<f64>,
}

impl MachineLoad {
    /// The load now.
    pub fn now(threads: usize) -> Self {
        let read = |path| std::fs::read_to_string(path).ok();
        let cpus = read("/proc/stat")
            .map(|text| cpu_count(&text))
            .filter(|&count| count > 0)
            .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
            .unwrap_or(1);
        MachineLoad {
            cpus,
            threads,
            load_1min: read("/proc/loadavg").and_then(|text| load_1min(&text)),
        }
    }

    /// Whether other work shares the cores: a 1-minute load of at least a quarter of the
    /// CPUs before the benchmark has started any of its own.
    pub fn is_busy(&self) -> bool {
        self.load_1min
            .is_some_and(|load| load >= BUSY_SHARE * self.cpus as f64)
    }

    /// `machine: load 1.47 (1-minute average) on 2 CPUs, 2 threads measured`.
    pub fn describe(&self) -> String {
        let load = self
            .load_1min
            .map_or_else(|| "unknown".to_string(), |load| format!("{load:.2}"));
        format!(
            "machine: load {load} (1-minute average) on {} CPUs, {} threads measured",
            self.cpus, self.threads
        )
    }

    /// The warning line of a busy machine, if it is one.
    pub fn warning(&self) -> Option<String> {
        self.is_busy().then(|| {
            format!(
                "warning: the machine is busy (load {:.2} on {} CPUs): other work shares the cores, so these rates are lower than on an idle machine",
                self.load_1min.unwrap_or_default(),
                self.cpus
            )
        })
    }
}

/// CPU time counters of the whole machine and of this process, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuTimes {
    /// Every tick of every CPU, idle included.
    pub total: u64,
    /// Ticks the CPUs spent working (everything but idle and I/O wait).
    pub busy: u64,
    /// Ticks this process (all its threads) spent working.
    pub own: u64,
}

impl CpuTimes {
    /// The counters now (`None` where `/proc` cannot be read).
    pub fn now() -> Option<Self> {
        let machine = std::fs::read_to_string("/proc/stat").ok()?;
        let own = std::fs::read_to_string("/proc/self/stat").ok()?;
        let (total, busy) = machine_ticks(&machine)?;
        Some(CpuTimes {
            total,
            busy,
            own: process_ticks(&own)?,
        })
    }

    /// CPUs other processes kept busy on average between `self` and `later`, on a machine
    /// of `cpus` CPUs: (Δbusy − Δown) / Δtotal · cpus.
    pub fn others_between(&self, later: &CpuTimes, cpus: usize) -> Option<f64> {
        let total = later.total.checked_sub(self.total)?;
        if total == 0 {
            return None;
        }
        let busy = later.busy.saturating_sub(self.busy);
        let own = later.own.saturating_sub(self.own);
        Some(busy.saturating_sub(own) as f64 / total as f64 * cpus as f64)
    }
}

/// What other processes took during one measurement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OtherWork {
    /// CPUs other processes kept busy on average during the measurement.
    pub other_processes_cpus: f64,
    /// CPUs of the machine.
    pub cpus: usize,
}

impl OtherWork {
    /// Whether other processes kept at least a quarter of the CPUs busy.
    pub fn is_busy(&self) -> bool {
        self.other_processes_cpus >= BUSY_SHARE * self.cpus as f64
    }

    /// The warning line of a measurement other work slowed down, if it was one.
    pub fn warning(&self) -> Option<String> {
        self.is_busy().then(|| {
            format!(
                "  warning: other processes kept {:.1} of {} CPUs busy during this case: its CPU rates are lower than on an idle machine",
                self.other_processes_cpus, self.cpus
            )
        })
    }
}

/// The 1-minute load average: the first field of `/proc/loadavg`.
pub fn load_1min(loadavg: &str) -> Option<f64> {
    loadavg
        .split_whitespace()
        .next()?
        .parse()
        .ok()
        .filter(|load: &f64| load.is_finite())
}

/// The CPUs `/proc/stat` lists (`cpu0`, `cpu1`, …).
pub fn cpu_count(stat: &str) -> usize {
    stat.lines()
        .filter(|line| {
            line.strip_prefix("cpu")
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count()
}

/// (all ticks, busy ticks) of the `cpu` line of `/proc/stat`: user nice system idle iowait
/// irq softirq steal (guest time is already inside user and nice); busy is all but idle
/// and iowait.
pub fn machine_ticks(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|line| line.starts_with("cpu "))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|field| field.parse().ok())
        .collect::<Option<_>>()?;
    let total: u64 = ticks.iter().sum();
    let idle = ticks.get(3)? + ticks.get(4).copied().unwrap_or(0);
    Some((total, total - idle))
}

/// utime + stime of `/proc/self/stat` (fields 14 and 15, counted after the command name,
/// which may hold spaces and parentheses, so from its last `)`).
pub fn process_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROC_STAT: &str = "cpu  91792 10 8329 26633 788 0 77 403 0 0\n\
        cpu0 45000 5 4000 13000 400 0 40 200 0 0\n\
        cpu1 46792 5 4329 13633 388 0 37 203 0 0\n\
        intr 123\nctxt 456\n";

    #[test]
    fn proc_files_parse() {
        assert_eq!(load_1min("1.47 1.47 0.88 2/112 11602\n"), Some(1.47));
        assert_eq!(load_1min(""), None);
        assert_eq!(load_1min("nan 1 1"), None);
        assert_eq!(cpu_count(PROC_STAT), 2);
        let total = 91792 + 10 + 8329 + 26633 + 788 + 77 + 403;
        assert_eq!(machine_ticks(PROC_STAT), Some((total, total - 26633 - 788)));
        let own = "4242 (harbor (x) y) R 1 2 3 4 5 6 7 8 9 10 1500 250 0 0 20 0 8 0\n";
        assert_eq!(process_ticks(own), Some(1750));
        assert_eq!(process_ticks("4242 (harbor) R 1"), None);
    }

    /// Two CPUs over 100 ticks each (200 in all): 150 busy, 90 of them this process's, so
    /// other processes kept 60 / 200 · 2 = 0.6 CPUs busy.
    #[test]
    fn other_processes_are_the_busy_time_this_process_did_not_take() {
        let before = CpuTimes {
            total: 1000,
            busy: 400,
            own: 100,
        };
        let after = CpuTimes {
            total: 1200,
            busy: 550,
            own: 190,
        };
        let others = before.others_between(&after, 2).unwrap();
        assert!((others - 0.6).abs() < 1e-12, "{others}");
        let work = OtherWork {
            other_processes_cpus: others,
            cpus: 2,
        };
        assert!(work.is_busy());
        assert!(
            work.warning()
                .unwrap()
                .contains("other processes kept 0.6 of 2 CPUs busy")
        );
        assert_eq!(before.others_between(&before, 2), None);
    }

    #[test]
    fn a_load_of_a_quarter_of_the_cpus_is_busy() {
        let load = |load_1min| MachineLoad {
            cpus: 8,
            threads: 8,
            load_1min,
        };
        assert!(!load(Some(1.9)).is_busy());
        assert!(load(Some(2.0)).is_busy());
        assert!(!load(None).is_busy());
        assert_eq!(
            load(Some(3.5)).describe(),
            "machine: load 3.50 (1-minute average) on 8 CPUs, 8 threads measured"
        );
        assert!(
            load(Some(3.5))
                .warning()
                .unwrap()
                .starts_with("warning: the machine is busy (load 3.50 on 8 CPUs)")
        );
        assert!(load(None).describe().contains("load unknown"));
    }
}
