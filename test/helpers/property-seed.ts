// Randomised tests run one fixed seed by default, so that a run of npm test is the same run
// everywhere and a failure can be repeated; TALLY_PROPERTY_SEED=<n> explores another (a failing
// run prints its seed).
export const PROPERTY_SEED = Number(process.env.TALLY_PROPERTY_SEED ?? 20261202);
