// The tools of a step attempt: the turn's tools filtered by the step's
// tools.include/exclude, the pipeline tools it injects, and complete_step.
// Injected tools: ros_deploy (a cloud is needed; when the step also confirms
// deployments, it deploys only what the user confirmed), confirm_deployment,
// select_cloud_resource (a cloud is needed), show_architecture_diagram and
// show_candidate_detail (the candidates' evaluation).
import type { Turn } from "../session/turn.js";
import { selectCloudResourceTool } from "../tools/select-cloud-resource.js";
import type { AnyTool } from "../tools/types.js";
import { confirmDeploymentTool } from "./deployment-confirmation.js";
import type { LoadedStep } from "./loader.js";
import { showArchitectureDiagramTool, showCandidateDetailTool } from "./presentation-tools.js";
import { evaluatedCandidates } from "./selection.js";
import { confirmedDeployTool, rosDeployTool, type CompletionState } from "./tools.js";

/** What injected tools read from the run. */
export interface InjectedToolEnv {
  state: CompletionState;
  /** A context field's current value. */
  contextValue: (field: string) => unknown;
  /** The candidate selection step a deployment confirmation's reselect goes back to, when it can. */
  reselectTarget: () => string | undefined;
}

function injected(name: string, step: LoadedStep, turn: Turn, env: InjectedToolEnv): AnyTool[] {
  const inject = step.def.inject_tools ?? [];
  switch (name) {
    case "ros_deploy":
      if (!turn.cloud) return [];
      return [inject.includes("confirm_deployment") ? confirmedDeployTool(env.state) : rosDeployTool];
    case "select_cloud_resource":
      return turn.cloud ? [selectCloudResourceTool] : [];
    case "confirm_deployment":
      return [
        confirmDeploymentTool({
          state: env.state,
          plan: () => {
            const plan = env.contextValue("selected_plan");
            return plan && typeof plan === "object" ? (plan as Record<string, unknown>) : undefined;
          },
          reselectTarget: env.reselectTarget,
        }),
      ];
    case "show_architecture_diagram":
      return [showArchitectureDiagramTool(() => evaluatedCandidates(env.contextValue))];
    case "show_candidate_detail":
      return [showCandidateDetailTool(() => evaluatedCandidates(env.contextValue))];
    default:
      return [];
  }
}

export function stepTools(turn: Turn, step: LoadedStep, complete: AnyTool, env: InjectedToolEnv): AnyTool[] {
  const include = step.def.tools?.include;
  const exclude = new Set(step.def.tools?.exclude ?? []);
  const base = [...turn.tools.values()].filter(
    (tool) => (include === undefined || include.includes(tool.name)) && !exclude.has(tool.name),
  );
  const added = (step.def.inject_tools ?? []).flatMap((name) => injected(name, step, turn, env));
  return [...base, ...added, complete];
}
