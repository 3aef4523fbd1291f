//! Contact ensembles: member i depends only on (seed, i) — not on the ensemble's size, the
//! chunking or the number of threads — and every draw kind does what its key says.

use harbor::backend::Backend;
use harbor::contact::Potential;
use harbor::contact::{ContactConfig, ContactPlan};
use harbor::io::Config;
use harbor::kernels::CpuPath;

fn plan(members: usize, seed: u64) -> ContactPlan {
    let text = format!(
        r#"
[system]
kind = "contact"
x0 = [0.5, -0.2]
p0 = [0.5, 0.1]
potential = [{{ kind = "harmonic", K = [[1.0, 0.2], [0.2, 2.0]] }}, {{ kind = "quartic", beta = 0.3 }}]
damping = {{ kind = "constant", alpha = 0.1 }}
[scheme]
family = "splitting"
composition = "suzuki-4"
h = 0.05
t_end = 5.0
[output]
every = 10
[ensemble]
members = {members}
seed = {seed}
x0 = {{ kind = "perturb", sigma = 0.1 }}
p0 = {{ kind = "uniform", low = -1.0, high = 1.0 }}
alpha = {{ kind = "uniform", low = 0.01, high = 0.2 }}
beta = {{ kind = "perturb", sigma = 0.05 }}
"#
    );
    Config::from_str_with(&text, &[], "test")
        .unwrap()
        .contact_plan()
        .unwrap()
}

fn beta(plan: &ContactPlan, i: usize) -> f64 {
    let member = plan.member(i).unwrap();
    member
        .system
        .potential
        .iter()
        .find_map(|t| match t {
            Potential::Quartic { beta } => Some(*beta),
            _ => None,
        })
        .unwrap()
}

#[test]
fn members_depend_only_on_seed_and_index() {
    let (small, large, other) = (plan(50, 7), plan(5000, 7), plan(50, 8));
    for i in 0..50 {
        let (a, b) = (small.member(i).unwrap(), large.member(i).unwrap());
        assert_eq!(a.x0, b.x0, "member {i}");
        assert_eq!(a.p0, b.p0, "member {i}");
        assert_eq!(
            a.system.damping_coefficient(),
            b.system.damping_coefficient()
        );
        assert_eq!(beta(&small, i), beta(&large, i));
    }
    let a = small.member(3).unwrap();
    let b = other.member(3).unwrap();
    assert_ne!(a.x0, b.x0, "another seed draws other members");
    assert_ne!(
        small.member(3).unwrap().p0,
        small.member(4).unwrap().p0,
        "members differ"
    );
}

#[test]
fn draws_do_what_their_keys_say() {
    let plan = plan(2000, 11);
    let (mut alphas, mut dx, mut betas) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..2000 {
        let m = plan.member(i).unwrap();
        let alpha = m.system.damping_coefficient();
        assert!((0.01..0.2).contains(&alpha), "uniform alpha {alpha}");
        for &p in m.p0.iter() {
            assert!((-1.0..1.0).contains(&p), "uniform p0 {p}");
        }
        alphas.push(alpha);
        dx.push(m.x0[0] - 0.5);
        betas.push(beta(&plan, i) - 0.3);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let sd = |v: &[f64]| {
        let m = mean(v);
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
    };
    // 2000 draws: the sample mean of U(0.01, 0.2) is 0.105 ± 0.0012 (one standard error
    // 0.19/√12/√2000), the standard deviations of the perturbations σ ± σ/√4000.
    assert!(
        (mean(&alphas) - 0.105).abs() < 5.0 * 0.0012,
        "{}",
        mean(&alphas)
    );
    assert!(
        (sd(&dx) - 0.1).abs() < 5.0 * 0.1 / 4000f64.sqrt(),
        "{}",
        sd(&dx)
    );
    assert!(
        (sd(&betas) - 0.05).abs() < 5.0 * 0.05 / 4000f64.sqrt(),
        "{}",
        sd(&betas)
    );
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let plan = plan(300, 5);
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| Backend::Cpu(CpuPath::Reference).run(&plan).unwrap())
    };
    let (one, two) = (run(1), run(2));
    assert_eq!(one.members.len(), 300);
    assert_eq!(one.members, two.members);
}
