//! The contact family as the engine runs it: H = ½ pᵀ P p + B(t, x) + C(t) z integrated by
//! a composition of the Strang splitting of its exact flows, or by the Herglotz variational
//! integrator ([`super::flows`] states and derives both).
//!
//! [`Family`]: members, records and the reference integrator ([`super::flows`] on the model
//! itself, std's functions, time functions evaluated directly). [`GpuKernel`]: the kernel of
//! [`super::shape`], its packing and decoding, and its CPU twin ([`contact_step_twin`] in
//! [`super::twin`]). [`FastEngine`](crate::kernels::FastEngine): the fast CPU engine of
//! [`super::fast`].

use rayon::prelude::*;

use super::flows as contact_flows;
use super::model::ContactMember;
use super::plan::{ContactMethod, ContactPlan};
use super::reference::record_member;
use super::shape::{ContactShape, MAX_DOF};
use super::twin::contact_step_twin;
use crate::error::{Error, Result};
use crate::kernels::family::{Family, GpuKernel, KernelChunk, KernelSource};
use crate::kernels::layout::MemberView;
use crate::kernels::twin::TwinBindings;
use crate::plan::{MemberResult, RecordSpec, SharedStream, StepGrid};

impl ContactPlan {
    fn check_gpu(&self) -> Result<()> {
        let n = self.dof();
        if n > MAX_DOF {
            return Err(Error::invalid(
                "system",
                format!(
                    "n = {n} degrees of freedom exceed the contact kernel's limit of {MAX_DOF}; use --backend cpu"
                ),
            ));
        }
        Ok(())
    }

    fn gammas(&self) -> Vec<f64> {
        self.method().composition().coefficients.clone()
    }

    /// Per stage, the stream point of its closing half φ_B(τ/2) φ_C(τ/2) (the second of
    /// [`ContactMethod::stage_points`]), as the kernel reads it from its constants.
    fn closing_points(&self) -> Vec<f64> {
        self.method()
            .stage_points()
            .iter()
            .map(|&[_, closing]| closing as f64)
            .collect()
    }
}

impl Family for ContactPlan {
    type Member = ContactMember;
    type Kernel = Self;
    type Fast = Self;

    fn name(&self) -> &'static str {
        "contact"
    }

    fn method_label(&self) -> String {
        self.method().label()
    }

    fn grid(&self) -> &StepGrid {
        self.grid()
    }

    fn member_count(&self) -> usize {
        self.len()
    }

    fn states(&self) -> usize {
        self.dof()
    }

    fn with_member_count(&self, count: usize) -> Result<Self> {
        self.with_members(count)
    }

    fn member(&self, index: usize) -> Result<ContactMember> {
        ContactPlan::member(self, index)
    }

    fn record_spec(&self) -> &RecordSpec {
        self.record_spec()
    }

    fn describe(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut scheme = serde_json::json!({
            "label": self.method().label(),
            "family": match self.method() {
                ContactMethod::Splitting(..) => "splitting",
                ContactMethod::Herglotz(_) => "herglotz",
            },
            "order": self.method().order(),
        });
        let c = self.method().composition();
        scheme["composition"] = serde_json::json!(c.name);
        scheme["stages"] = serde_json::json!(c.stages());
        if let ContactMethod::Splitting(_, sampling) = self.method() {
            scheme["time_sampling"] = serde_json::json!(sampling.name());
        }
        let mut map = serde_json::Map::new();
        map.insert("scheme".into(), scheme);
        map.insert("dof".into(), serde_json::json!(self.dof()));
        map.insert(
            "state".into(),
            serde_json::json!("[x (n), p (n), z] per sample and in final_state"),
        );
        map
    }

    fn record_start(&self, member: &ContactMember, out: &mut MemberResult) {
        let y = member.initial_state();
        let n = self.dof();
        out.trajectory.extend_from_slice(&y);
        out.channels[0].push(
            member
                .system
                .hamiltonian(0.0, &y[..n], &y[n..2 * n], y[2 * n]),
        );
    }

    fn reference(&self, member: &ContactMember) -> Result<MemberResult> {
        let n = self.dof();
        let y0 = member.initial_state();
        let system = &member.system;
        let h0 = system.hamiltonian(0.0, &y0[..n], &y0[n..2 * n], y0[2 * n]);
        let h = self.grid().h;
        let mut gradient = vec![0.0; n];
        let offsets = self.method().offsets();
        let mut times = vec![0.0; offsets.len()];
        Ok(record_member(
            self.grid(),
            self.record_spec(),
            y0,
            h0,
            |k, y| {
                // The shared stream's times t = (k + offset_i) h (plan::stream), so
                // that signals are evaluated at the same f64 times as on the GPU:
                // a signal of frequency f moves by 2π f ulp(t) between two times an
                // ulp apart, 1.4 rad at f = 1e15 Hz and t ≈ 1.
                for (time, offset) in times.iter_mut().zip(&offsets) {
                    *time = (k as f64 + offset) * h;
                }
                contact_flows::step_at(self.method(), system, &times, h, y, &mut gradient)
            },
            |k, y| system.hamiltonian(k as f64 * h, &y[..n], &y[n..2 * n], y[2 * n]),
        ))
    }

    fn check_stream(&self) -> Result<()> {
        ContactPlan::check_stream(self)
    }

    fn shared_stream(&self) -> &SharedStream {
        self.stream()
    }

    fn gpu_kernel(&self) -> Option<&Self> {
        Some(self)
    }

    /// The fast engine of [`super::fast`] runs every contact plan.
    fn fast_engine(&self) -> Option<&Self> {
        Some(self)
    }
}

impl GpuKernel for ContactPlan {
    type Member = ContactMember;

    fn kernel_bound(&self) -> Result<KernelSource> {
        self.check_gpu()?;
        Ok(ContactShape::of(self).kernel())
    }

    fn kernel_chunk(&self, members: &[ContactMember]) -> Result<KernelChunk> {
        self.check_gpu()?;
        let shape = ContactShape::of(self);
        let kernel = shape.kernel();
        let per_member: Vec<Vec<f64>> = members.par_iter().map(|m| shape.params(m)).collect();
        let layout = shape.param_layout();
        let params = layout.pack(members.len(), |i, field, out| {
            let offset = layout.offset(field);
            out.copy_from_slice(&per_member[i][offset..offset + out.len()]);
        });
        let state = kernel
            .state
            .pack(members.len(), |i, field, out| match field {
                "x" => out.copy_from_slice(members[i].x0.as_slice()),
                "p" => out.copy_from_slice(members[i].p0.as_slice()),
                "z" => out[0] = members[i].z0,
                // status: 0, finite so far.
                _ => {}
            });
        Ok(KernelChunk {
            kernel,
            params,
            state,
        })
    }

    fn constants(&self) -> Vec<f64> {
        let mut values = vec![self.grid().h];
        values.extend(self.gammas());
        values.extend(self.closing_points());
        values
    }

    fn decode_record(&self, record: &MemberView, out: &mut MemberResult) {
        record.extend_into("x", &mut out.trajectory);
        record.extend_into("p", &mut out.trajectory);
        record.extend_into("z", &mut out.trajectory);
        out.channels[0].push(record.get("hamiltonian", 0));
    }

    fn decode_final(&self, state: &MemberView, out: &mut MemberResult) {
        out.final_state.clear();
        state.extend_into("x", &mut out.final_state);
        state.extend_into("p", &mut out.final_state);
        state.extend_into("z", &mut out.final_state);
        let channel = &out.channels[0];
        out.totals = vec![channel[0], channel[channel.len() - 1]];
    }

    fn twin(&self, kernel: &KernelSource, bindings: &TwinBindings, member: usize) {
        contact_step_twin(&ContactShape::of(self), kernel, bindings, member);
    }
}
