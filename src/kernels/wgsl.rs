//! Assembly of a family's kernel: the engine prepends the real type, the workgroup size,
//! the kernel's specialisation constants, the constants generated from its declared layouts
//! and the binding declarations, then resolves `#import <module>` lines against the shared
//! modules in `shaders/shared/` (each module once, its own imports first), and expands the
//! counted loops `#for <var> in <count>` … `#end` (see [`expand_loops`]). Every assembled
//! source is validated by naga with exactly the capabilities harbor requests.

use std::borrow::Cow;

use super::abi::wgsl_bindings;
use super::family::KernelSource;
use super::precision::Precision;
use crate::error::{Error, Result};

/// Invocations per workgroup.
pub const WORKGROUP_SIZE: u32 = 64;

/// A shared WGSL module by name; `math` follows the precision.
fn shared_module(name: &str, precision: Precision) -> Option<&'static str> {
    Some(match name {
        "math" => super::math::wgsl_library(precision),
        "compensated" => include_str!("../../shaders/shared/compensated.wgsl"),
        "finite" => include_str!("../../shaders/shared/finite.wgsl"),
        "records" => include_str!("../../shaders/shared/records.wgsl"),
        "energy_balance" => include_str!("../../shaders/shared/energy_balance.wgsl"),
        _ => return None,
    })
}

/// The module names a source imports, in order.
fn imports(source: &str) -> Vec<&str> {
    source
        .lines()
        .filter_map(|line| line.trim().strip_prefix("#import "))
        .map(str::trim)
        .collect()
}

fn without_imports(source: &str) -> String {
    source
        .lines()
        .filter(|line| !line.trim().starts_with("#import "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Appends `name` after its own imports, each module once; `family` holds the kernel's
/// own modules, searched before the shared ones.
fn resolve(
    name: &str,
    family: &[(&str, Cow<'static, str>)],
    precision: Precision,
    seen: &mut Vec<String>,
    out: &mut String,
) -> Result<()> {
    if seen.iter().any(|s| s == name) {
        return Ok(());
    }
    seen.push(name.to_string());
    let module = family
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, source)| source.as_ref())
        .or_else(|| shared_module(name, precision))
        .ok_or_else(|| Error::Gpu(format!("WGSL: unknown module `#import {name}`")))?;
    for dependency in imports(module) {
        resolve(dependency, family, precision, seen, out)?;
    }
    out.push_str(&format!("// ---- module {name}\n"));
    out.push_str(&without_imports(module));
    out.push('\n');
    Ok(())
}

/// Whether an identifier character (`var` is replaced only as a whole word).
fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `line` with every whole-word occurrence of `name` replaced by `value`.
fn substitute(line: &str, name: &str, value: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(name) {
        out.push_str(&rest[..at]);
        let before = out.chars().next_back();
        let after = rest[at + name.len()..].chars().next();
        if before.is_some_and(is_ident) || after.is_some_and(is_ident) {
            out.push_str(name);
        } else {
            out.push_str(value);
        }
        rest = &rest[at + name.len()..];
    }
    out.push_str(rest);
    out
}

/// Expands the counted loops of `source`: a line `#for <var> in <count>` opens a loop over
/// `<var>` = 0, 1, …, count − 1 that the matching `#end` line closes (loops nest); `<count>`
/// is an integer (`4` or `4u`) or one of `constants`. With `unroll` the body is repeated count times in
/// its own block, `<var>` replaced by the literal `ku` (so private arrays are indexed by
/// constants and no loop is left to count or to bound), else it becomes
/// `for (var <var> = 0u; <var> < <count>; <var>++) { … }`.
pub fn expand_loops(source: &str, constants: &[(&str, u32)], unroll: bool) -> Result<String> {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::with_capacity(source.len());
    let mut at = 0;
    while at < lines.len() {
        at = expand_from(&lines, at, constants, unroll, &mut out)?;
    }
    Ok(out)
}

/// The loop header `#for <var> in <count>` of `line`, if it is one.
fn loop_header(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim().strip_prefix("#for ")?;
    let (var, count) = rest.split_once(" in ")?;
    Some((var.trim(), count.trim()))
}

/// Expands the line at `at` (with the loop it opens) into `out`; returns the next line.
fn expand_from(
    lines: &[&str],
    at: usize,
    constants: &[(&str, u32)],
    unroll: bool,
    out: &mut String,
) -> Result<usize> {
    let line = lines[at];
    let Some((var, count)) = loop_header(line) else {
        if line.trim() == "#end" {
            return Err(Error::Gpu(format!(
                "WGSL: `#end` without `#for` at line {}",
                at + 1
            )));
        }
        out.push_str(line);
        out.push('\n');
        return Ok(at + 1);
    };
    // The body: up to the matching `#end`.
    let mut depth = 1;
    let mut end = at + 1;
    while end < lines.len() {
        if loop_header(lines[end]).is_some() {
            depth += 1;
        } else if lines[end].trim() == "#end" {
            depth -= 1;
            if depth == 0 {
                break;
            }
        }
        end += 1;
    }
    if depth != 0 {
        return Err(Error::Gpu(format!(
            "WGSL: `#for {var} in {count}` at line {} has no `#end`",
            at + 1
        )));
    }
    let body = &lines[at + 1..end];
    let indent = &line[..line.len() - line.trim_start().len()];
    if unroll {
        let times = match count.trim_end_matches('u').parse::<u32>() {
            Ok(value) => value,
            Err(_) => constants
                .iter()
                .find(|(name, _)| *name == count)
                .map(|&(_, value)| value)
                .ok_or_else(|| {
                    Error::Gpu(format!(
                        "WGSL: `#for {var} in {count}`: {count} is not a specialisation constant"
                    ))
                })?,
        };
        for k in 0..times {
            let value = format!("{k}u");
            let substituted: Vec<String> =
                body.iter().map(|l| substitute(l, var, &value)).collect();
            let substituted: Vec<&str> = substituted.iter().map(String::as_str).collect();
            out.push_str(&format!("{indent}{{\n"));
            let mut inner = 0;
            while inner < substituted.len() {
                inner = expand_from(&substituted, inner, constants, unroll, out)?;
            }
            out.push_str(&format!("{indent}}}\n"));
        }
    } else {
        out.push_str(&format!(
            "{indent}for (var {var} = 0u; {var} < {count}; {var}++) {{\n"
        ));
        let mut inner = 0;
        while inner < body.len() {
            inner = expand_from(body, inner, constants, unroll, out)?;
        }
        out.push_str(&format!("{indent}}}\n"));
    }
    Ok(end + 1)
}

/// The complete WGSL of `kernel` in `precision`.
pub fn assemble(kernel: &KernelSource, precision: Precision) -> Result<String> {
    if !kernel
        .state
        .fields
        .iter()
        .any(|f| f.name == "status" && f.len == 1)
    {
        return Err(Error::Gpu(format!(
            "kernel {}: its STATE layout must declare a `status` field of one real (the member's non-finite status)",
            kernel.name
        )));
    }
    let (real_max, real_epsilon) = match precision {
        Precision::F64 => (format!("{:e}", f64::MAX), format!("{:e}", f64::EPSILON)),
        Precision::F32 => (
            format!("{:e}", f32::MAX as f64),
            format!("{:e}", f32::EPSILON as f64),
        ),
    };
    let mut out = format!(
        "// harbor kernel {} ({})\nalias real = {};\nconst WG: u32 = {}u;\nconst REAL_MAX: real = {real_max};\nconst REAL_EPSILON: real = {real_epsilon};\n",
        kernel.name,
        precision.name(),
        precision.name(),
        WORKGROUP_SIZE
    );
    for (name, value) in &kernel.constants {
        out.push_str(&format!("const {name}: u32 = {value}u;\n"));
    }
    for layout in [
        &kernel.params,
        &kernel.state,
        &kernel.record,
        &kernel.constants_layout,
    ] {
        out.push_str(&layout.wgsl());
    }
    out.push_str(&wgsl_bindings());
    let mut seen = Vec::new();
    for name in imports(kernel.body) {
        resolve(name, &kernel.modules, precision, &mut seen, &mut out)?;
    }
    out.push_str(&format!("// ---- kernel {}\n", kernel.name));
    out.push_str(&without_imports(kernel.body));
    out.push('\n');
    let unroll = kernel
        .constants
        .iter()
        .any(|&(name, value)| name == "UNROLL" && value == 1);
    expand_loops(&out, &kernel.constants, unroll)
}

/// The naga capabilities harbor requests for `precision`.
pub fn capabilities(precision: Precision) -> naga::valid::Capabilities {
    match precision {
        Precision::F64 => naga::valid::Capabilities::FLOAT64,
        Precision::F32 => naga::valid::Capabilities::empty(),
    }
}

/// Parses and validates a kernel source with naga.
pub fn validate(
    source: &str,
    precision: Precision,
) -> Result<(naga::Module, naga::valid::ModuleInfo)> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| Error::Gpu(format!("WGSL parse error:\n{}", e.emit_to_string(source))))?;
    let info =
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities(precision))
            .validate(&module)
            .map_err(|e| {
                Error::Gpu(format!(
                    "WGSL validation error:\n{}",
                    e.emit_to_string(source)
                ))
            })?;
    Ok((module, info))
}

/// Translates a validated kernel to SPIR-V, as the Vulkan backend will; returns the
/// number of words.
pub fn to_spirv(source: &str, precision: Precision) -> Result<usize> {
    let (module, info) = validate(source, precision)?;
    let words =
        naga::back::spv::write_vec(&module, &info, &naga::back::spv::Options::default(), None)
            .map_err(|e| Error::Gpu(format!("SPIR-V generation failed: {e}")))?;
    Ok(words.len())
}

/// Assembles `kernel` in `precision`, validates it and translates it to SPIR-V (what the
/// unit tests demand of every variant a family can generate); returns the number of words.
pub fn translate(kernel: &KernelSource, precision: Precision) -> Result<usize> {
    to_spirv(&assemble(kernel, precision)?, precision)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_resolved_once_with_their_dependencies_first() {
        let family = [("family_module", "#import compensated\nfn f() {}\n".into())];
        let mut out = String::new();
        let mut seen = Vec::new();
        resolve(
            "family_module",
            &family,
            Precision::F64,
            &mut seen,
            &mut out,
        )
        .unwrap();
        resolve("compensated", &family, Precision::F64, &mut seen, &mut out).unwrap();
        let compensated = out.find("// ---- module compensated").unwrap();
        let energy = out.find("// ---- module family_module").unwrap();
        assert!(compensated < energy);
        assert_eq!(out.matches("// ---- module compensated").count(), 1);
        assert!(!out.contains("#import"));
    }

    #[test]
    fn kernels_without_a_status_field_are_refused() {
        use crate::kernels::layout::Layout;
        let kernel = KernelSource {
            name: "probe",
            body: "",
            modules: vec![],
            constants: vec![],
            params: Layout::new("PARAM"),
            state: Layout::new("STATE").field("x", 1),
            record: Layout::new("RECORD"),
            constants_layout: Layout::new("CONST"),
            members_per_workgroup: 1,
            loop_iterations_per_step: 1,
            flops_per_step: 1,
            bytes_per_step: 0,
            step_multiple: 1,
            scratch: 0,
        };
        let e = assemble(&kernel, Precision::F64).unwrap_err().to_string();
        assert!(e.contains("must declare a `status` field"), "{e}");
    }

    #[test]
    fn counted_loops_unroll_or_stay_loops() {
        let source = "a\n    #for r in N\n    x[r] = 0;\n        #for c in 2\n        acc += m[r * N + c] * carry[c];\n        #end\n    #end\nb";
        let unrolled = expand_loops(source, &[("N", 2)], true).unwrap();
        assert!(!unrolled.contains("for"), "{unrolled}");
        assert!(unrolled.contains("x[1u] = 0;"), "{unrolled}");
        assert!(
            unrolled.contains("acc += m[1u * N + 0u] * carry[0u];"),
            "{unrolled}"
        );
        assert_eq!(unrolled.matches("acc +=").count(), 4);
        assert!(unrolled.starts_with("a\n") && unrolled.ends_with("b\n"));
        let looped = expand_loops(source, &[("N", 2)], false).unwrap();
        assert!(
            looped.contains("for (var r = 0u; r < N; r++) {"),
            "{looped}"
        );
        assert!(
            looped.contains("for (var c = 0u; c < 2; c++) {"),
            "{looped}"
        );
        assert_eq!(looped.matches("acc +=").count(), 1);
        for bad in ["#for r in N\nx", "x\n#end", "#for r in Q\n#end"] {
            assert!(expand_loops(bad, &[("N", 2)], true).is_err(), "{bad}");
        }
    }

    #[test]
    fn unknown_imports_are_errors() {
        let mut seen = Vec::new();
        let e = resolve(
            "nonexistent",
            &[],
            Precision::F32,
            &mut seen,
            &mut String::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown module `#import nonexistent`"), "{e}");
    }
}
