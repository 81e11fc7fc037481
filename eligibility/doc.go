// Package eligibility is the pure pipeline that decides which skills an
// agent may be offered: config filter (with the version constraint) →
// governance → requirement validation → runtime host filtering → config
// truthiness → dependencies on other skills of the agent's view. It does
// no I/O and its output is deterministic.
//
// It owns each decision of the pipeline once:
//   - the host-independent stages, in order, in prepareStages (Prepare);
//   - the host filter chain, in order, in hostStages, which both the host
//     index (Index) and the per-host check (Requirements.Matches) run;
//   - the verdict, in Prepared.Decide, which the evaluation through the
//     index and the gateway's live counts both call;
//   - the dependency stage over a whole view, in Offer, which runs last
//     on those verdicts wherever a view is evaluated.
//
// The host index is the only evaluator of a set of hosts, in the gateway
// and in the offline eval alike. What a skill's report holds besides the
// verdict (the prompt, the JSON shape) is built downstream, in
// report.
//
// It reads protocol (host facts) and skill (the parsed SKILL.md), and
// never imports promptbuild, report, store, catalog, gateway or the
// commands: data flows from here to them, never back.
package eligibility
