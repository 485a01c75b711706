// Demo mode's scenarios: a pipeline request whose first message carries a tag
// such as [demo:deploy-fails] plays that scenario. The engine keeps the
// scenario in the run (meta.scenario, so a restarted run keeps it) and puts a
// marker <!--demo:NAME--> into every system prompt of the run (its steps,
// candidates, compaction and the interrupt judge), which the demo script's
// rules match (systemText); the simulated ROS endpoint reacts to what the
// scripted model deploys (a quota, deletion protection, several regions).
// What each scenario shows is in the README ("Pipeline mode").

export const DEMO_SCENARIOS = [
  "deploy-fails",
  "cleanup-fails",
  "candidate-fails",
  "slow-deploy",
  "long-context",
  "compaction-fails",
] as const;

export type DemoScenario = (typeof DEMO_SCENARIOS)[number];

/** The scenario a message's tag names (the first known one), if any. */
export function demoScenarioOf(text: string): DemoScenario | undefined {
  for (const match of text.matchAll(/\[demo:([a-z-]+)\]/g)) {
    const name = match[1] as DemoScenario;
    if (DEMO_SCENARIOS.includes(name)) return name;
  }
  return undefined;
}

/**
 * Scenarios that play another one with a twist carry its marker too, so the
 * script's rules for that one apply: cleanup-fails is deploy-fails whose
 * cleanup fails, compaction-fails is long-context whose compaction fails.
 */
const EXTENDS: Partial<Record<DemoScenario, DemoScenario>> = {
  "cleanup-fails": "deploy-fails",
  "compaction-fails": "long-context",
};

/** The system prompt markers of a run's scenario (none without one). */
export function demoMarkers(scenario: string | undefined): string[] {
  if (!scenario) return [];
  const base = EXTENDS[scenario as DemoScenario];
  return [...(base ? [`<!--demo:${base}-->`] : []), `<!--demo:${scenario}-->`];
}
