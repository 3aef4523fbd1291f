use harbor::backend::Backend;
use harbor::backend::gpu::context::adapter_selector;
use harbor::backend::gpu::{GpuContext, GpuRunOptions, Precision, run};
use harbor::io::Config;
use harbor::kernels::CpuPath;

#[test]
fn scratch() {
    let ctx = GpuContext::open(adapter_selector(None).as_deref(), Some(Precision::F64)).unwrap();
    for (name, pot) in [
        ("harmonic", "{ kind = \"harmonic\", K = [[1.3]] }"),
        ("quartic", "{ kind = \"quartic\", beta = 0.7 }"),
        (
            "both",
            "{ kind = \"harmonic\", K = [[1.3]] }, { kind = \"quartic\", beta = 0.7 }",
        ),
    ] {
        for fam in [
            "family = \"herglotz\"",
            "family = \"splitting\"\ncomposition = \"strang\"",
        ] {
            let text = format!(
                "[system]\nkind = \"contact\"\nx0 = [0.7]\np0 = [0.3]\nkinetic = [[0.9]]\npotential = [{pot}]\n[scheme]\n{fam}\nh = 0.1\nt_end = 0.1\n[ensemble]\nmembers = 20000\nx0 = {{ kind = \"uniform\", low = -1.0, high = 1.0 }}\np0 = {{ kind = \"uniform\", low = -1.0, high = 1.0 }}\nz0 = {{ kind = \"uniform\", low = -1.0, high = 1.0 }}\n"
            );
            let plan = Config::from_str_with(&text, &[], "x")
                .unwrap()
                .contact_plan()
                .unwrap();
            let g = run(&ctx, &plan, &GpuRunOptions::default()).unwrap();
            let t = Backend::Cpu(CpuPath::Twin).run(&plan).unwrap();
            let mut diff = [0usize; 4];
            let mut shown = 0;
            for (i, (a, b)) in g.members.iter().zip(&t.members).enumerate() {
                for j in 0..3 {
                    if a.final_state[j] != b.final_state[j] {
                        diff[j] += 1;
                    }
                }
                if a.totals[1] != b.totals[1] {
                    diff[3] += 1;
                }
                if a.final_state[2] != b.final_state[2] && shown < 3 && name == "harmonic" {
                    shown += 1;
                    let y0 = plan.member(i).unwrap().initial_state();
                    println!(
                        "member {i}: y0 {:?} gpu z {:e} twin z {:e}",
                        y0, a.final_state[2], b.final_state[2]
                    );
                }
            }
            println!(
                "{name} {fam}: x {} p {} z {} H {} of 20000 differ",
                diff[0], diff[1], diff[2], diff[3]
            );
        }
    }
}
