//! The plan: plain data describing one run — the time grid, the members of the ensemble,
//! the values shared by all members, and what each member records. Every model family has
//! its plan here; backends execute any of them through [`crate::kernels::Family`], and
//! nothing here needs an adapter.

pub mod budget;
pub mod gradient_resources;
pub mod grid;
pub mod parts;
pub mod record;
pub mod regularization;
pub mod stream;

// The linear-PH plans live in their wing (`crate::families::linear_ph`); these paths
// re-export them until every caller names the wing.
pub use crate::families::linear_ph::{ensemble, gradient_plan as gradient, plan as linear_ph};

pub use budget::{MemoryBudget, format_bytes};
pub use ensemble::{Draw, DrawnEnsemble, Ensemble, EnsembleSpec};
pub use gradient::{GradientPlan, OutputData, Parameters, Quadrature, check_scheme};
pub use gradient_resources::{DescentSizes, ProblemEstimate, ProblemSizes, Setting};
pub use grid::{StepGrid, step_count};
pub use linear_ph::{EnergyTotals, LinearPhPlan, Member, StepEnergy};
pub use parts::{PART_NAMES, Parts};
pub use record::{Channel, MemberResult, RecordSpec, Recording, ResultSink};
pub use regularization::{QDistance, Regularization};
pub use stream::SharedStream;
