//! `HARBOR_SIMD` through the binary: a value that names no level, or a level this CPU
//! lacks, is an `error:` line naming the variable, the value and the accepted values — not
//! a panic, not silently ignored — and the run writes nothing.

use harbor::kernels::lanes::SimdLevel;

fn simulate_with_simd(value: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let config = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/oscillator_damped.toml"
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args(["simulate", config, "--backend", "cpu", "--out"])
        .arg(&out)
        .env("HARBOR_SIMD", value)
        .output()
        .unwrap();
    if !output.status.success() {
        assert!(
            !out.exists(),
            "HARBOR_SIMD={value}: a failed run wrote {out:?}"
        );
    }
    output
}

fn refusal(value: &str) -> String {
    let output = simulate_with_simd(value);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "HARBOR_SIMD={value} was accepted");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.starts_with("error: HARBOR_SIMD: "), "{stderr}");
    stderr
}

#[test]
fn an_unknown_harbor_simd_is_an_error_naming_the_accepted_values() {
    let stderr = refusal("bogus");
    for part in ["\"bogus\"", "avx512, avx2 and portable"] {
        assert!(stderr.contains(part), "{stderr:?} should mention {part:?}");
    }
}

#[test]
fn a_harbor_simd_level_the_cpu_lacks_is_an_error() {
    // The levels above the best this CPU has (none on an AVX-512 machine).
    let best = SimdLevel::detect();
    let lacking: &[&str] = match best {
        SimdLevel::Avx512 => &[],
        SimdLevel::Avx2 => &["avx512"],
        SimdLevel::Portable => &["avx512", "avx2"],
    };
    for value in lacking {
        let stderr = refusal(value);
        assert!(stderr.contains("not supported by this CPU"), "{stderr}");
    }
}

#[test]
fn supported_harbor_simd_levels_run() {
    for value in ["", "portable", SimdLevel::detect().name()] {
        let output = simulate_with_simd(value);
        assert!(
            output.status.success(),
            "HARBOR_SIMD={value:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
