//! The registry of model families. Everything downstream (backends, writers, the CLI) is
//! generic over [`Family`] and reaches the concrete plan through [`RunPlan::visit`];
//! registering a family adds a variant and its arm here, and the `kind` arm that builds its
//! plan in `io::config` (`SystemSpec::parse`, `Config::run_plan`).

use crate::kernels::Family;
use crate::plan::{ContactPlan, LinearPhPlan};

/// The plan of any registered family.
#[derive(Debug, Clone)]
pub enum RunPlan {
    /// `linear-ph` and `mechanical` systems under collocation.
    LinearPh(Box<LinearPhPlan>),
    /// `contact` systems under splitting or Herglotz.
    Contact(Box<ContactPlan>),
}

/// Code that runs on any family: `visit` is called with the concrete plan.
pub trait FamilyVisitor {
    type Output;
    fn visit<F: Family>(self, family: &F) -> Self::Output;
}

impl RunPlan {
    /// Calls `visitor` with the concrete family.
    pub fn visit<V: FamilyVisitor>(&self, visitor: V) -> V::Output {
        match self {
            RunPlan::LinearPh(plan) => visitor.visit(plan.as_ref()),
            RunPlan::Contact(plan) => visitor.visit(plan.as_ref()),
        }
    }
}
