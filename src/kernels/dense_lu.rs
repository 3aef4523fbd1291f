//! The dense LU solve of small Newton systems inside a kernel, in two forms that perform the
//! same operations in the same order: straight-line WGSL for the kernels ([`wgsl_module`])
//! and its CPU twin ([`factorise`], [`solve`]), both in nalgebra's order — for each column
//! the first row of largest |entry| pivots, a zero pivot column is skipped, rows are
//! swapped whole, the multipliers below the pivot are scaled by its reciprocal and the rows
//! below updated; the solve applies the swaps in order, then forward substitution with L's
//! unit diagonal and back substitution with U, false at a zero diagonal. A family whose
//! kernel solves a small dense system per step (the port-Hamiltonian stages, a variational
//! step) uses both.

/// `factorise()` and `solve() -> bool` on a kernel's private `matrix` (`unknowns` ×
/// `unknowns`, row-major), `rhs` and `pivot`, as straight-line WGSL. Written out for the
/// triangular index ranges (no loops: llvmpipe truncates an invocation's loops after 65535
/// passes, and a looped factorisation takes about n³/3 of them per Newton iteration), every
/// array index a constant: the swap with the pivot's row is written once per candidate row,
/// as selects (a dynamically indexed private array is slow to compile and to run on some
/// drivers).
pub fn wgsl_module(unknowns: usize) -> String {
    let d = unknowns;
    let at = |r: usize, c: usize| r * d + c;
    let mut lines = vec!["// ---- dense LU (src/kernels/dense_lu.rs)".to_string()];
    lines.push("fn factorise() {".into());
    for col in 0..d {
        lines.push(format!("    // column {col}"));
        lines.push("    {".into());
        lines.push(format!("    var p = {col}u;"));
        lines.push(format!("    var diagonal = matrix[{}];", at(col, col)));
        lines.push("    var largest = abs(diagonal);".into());
        for r in col + 1..d {
            let e = at(r, col);
            lines.push(format!(
                "    if (abs(matrix[{e}]) > largest) {{ diagonal = matrix[{e}]; largest = abs(diagonal); p = {r}u; }}"
            ));
        }
        lines.push(format!("    pivot[{col}] = {col}u;"));
        lines.push("    if (diagonal != real(0.0)) {".into());
        if col + 1 < d {
            lines.push(format!("        pivot[{col}] = p;"));
            for r in col + 1..d {
                lines.push(format!("        let swap{r} = p == {r}u;"));
                for c in 0..d {
                    let (top, other) = (at(col, c), at(r, c));
                    lines.push(format!(
                        "        let top{r}_{c} = matrix[{top}]; let other{r}_{c} = matrix[{other}]; matrix[{top}] = select(top{r}_{c}, other{r}_{c}, swap{r}); matrix[{other}] = select(other{r}_{c}, top{r}_{c}, swap{r});"
                    ));
                }
            }
            lines.push("        let inverse = real(1.0) / diagonal;".into());
            for r in col + 1..d {
                let e = at(r, col);
                lines.push(format!("        matrix[{e}] = matrix[{e}] * inverse;"));
            }
            for c in col + 1..d {
                lines.push(format!("        let above{c} = matrix[{}];", at(col, c)));
                for r in col + 1..d {
                    let (e, l) = (at(r, c), at(r, col));
                    lines.push(format!(
                        "        matrix[{e}] = matrix[{e}] - above{c} * matrix[{l}];"
                    ));
                }
            }
        }
        lines.push("    }".into());
        lines.push("    }".into());
    }
    lines.push("}".into());
    lines.push(String::new());
    lines.push("fn solve() -> bool {".into());
    for i in 0..d {
        for r in i + 1..d {
            lines.push(format!(
                "    if (pivot[{i}] == {r}u) {{ let held = rhs[{i}]; rhs[{i}] = rhs[{r}]; rhs[{r}] = held; }}"
            ));
        }
    }
    for i in 0..d {
        for r in i + 1..d {
            lines.push(format!(
                "    rhs[{r}] = rhs[{r}] - rhs[{i}] * matrix[{}];",
                at(r, i)
            ));
        }
    }
    lines.push("    var regular = true;".into());
    for i in (0..d).rev() {
        let e = at(i, i);
        lines.push(format!(
            "    regular = regular && matrix[{e}] != real(0.0);"
        ));
        lines.push(format!("    rhs[{i}] = rhs[{i}] / matrix[{e}];"));
        for r in 0..i {
            lines.push(format!(
                "    rhs[{r}] = rhs[{r}] - rhs[{i}] * matrix[{}];",
                at(r, i)
            ));
        }
    }
    lines.push("    return regular;".into());
    lines.push("}".into());
    lines.join("\n") + "\n"
}

/// The twin of `factorise()`: Gaussian elimination with partial pivoting of the
/// d × d row-major `matrix` in place, the row chosen for column i in `pivot[i]`.
pub fn factorise(matrix: &mut [f64], pivot: &mut [usize]) {
    let d = pivot.len();
    let a = matrix;
    for col in 0..d {
        let mut p = col;
        let mut largest = a[col * d + col].abs();
        for r in col + 1..d {
            let value = a[r * d + col].abs();
            if value > largest {
                largest = value;
                p = r;
            }
        }
        let diagonal = a[p * d + col];
        pivot[col] = col;
        if diagonal == 0.0 {
            continue;
        }
        if p != col {
            pivot[col] = p;
            for c in 0..d {
                a.swap(col * d + c, p * d + c);
            }
        }
        let inverse = 1.0 / diagonal;
        for r in col + 1..d {
            a[r * d + col] *= inverse;
        }
        for c in col + 1..d {
            let above = a[col * d + c];
            for r in col + 1..d {
                a[r * d + c] -= above * a[r * d + col];
            }
        }
    }
}

/// The twin of `solve()`: the solution of the factorised system in place in `rhs`; false
/// at a zero diagonal of U.
pub fn solve(matrix: &[f64], pivot: &[usize], rhs: &mut [f64]) -> bool {
    let d = rhs.len();
    let (a, b) = (matrix, rhs);
    for (i, &p) in pivot.iter().enumerate().take(d) {
        b.swap(i, p);
    }
    for i in 0..d {
        let coefficient = b[i];
        for r in i + 1..d {
            b[r] -= coefficient * a[r * d + i];
        }
    }
    let mut regular = true;
    for i in (0..d).rev() {
        let diagonal = a[i * d + i];
        regular = regular && diagonal != 0.0;
        let coefficient = b[i] / diagonal;
        b[i] = coefficient;
        for r in 0..i {
            b[r] -= coefficient * a[r * d + i];
        }
    }
    regular
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The twin against nalgebra's LU on a system that needs pivoting.
    #[test]
    fn the_twin_solves_like_nalgebra() {
        let d = 5;
        let values: Vec<f64> = (0..d * d)
            .map(|i| {
                if i % (d + 1) == 0 && i < 8 {
                    0.0
                } else {
                    ((i * 37 % 11) as f64 - 5.0) / 3.0
                }
            })
            .collect();
        let b: Vec<f64> = (0..d).map(|i| i as f64 - 1.5).collect();
        let expected = nalgebra::DMatrix::from_row_slice(d, d, &values)
            .lu()
            .solve(&nalgebra::DVector::from_column_slice(&b))
            .unwrap();
        let (mut matrix, mut pivot, mut x) = (values, vec![0; d], b);
        factorise(&mut matrix, &mut pivot);
        assert!(solve(&matrix, &pivot, &mut x));
        for i in 0..d {
            assert!(
                (x[i] - expected[i]).abs() <= 1e-12,
                "{i}: {} vs {}",
                x[i],
                expected[i]
            );
        }
    }
}
