// Loading a pipeline: pipeline.yaml checked against the pipeline/definition
// contract, then the checks a schema cannot make (step references, prompt
// files, conclusion schemas that compile, context fields that exist), each
// problem reported with its path; a step's `skill` must name a bundled skill
// (a workspace may refine it, see StepEnv). The bundled pipelines live under
// bundled/.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import YAML from "yaml";
import {
  parsePipelineDefinition,
  type PipelineDefinition,
  type PipelineStep,
  type PipelineSubPipeline,
} from "../../contract/index.js";
import { ConfigError } from "../errors.js";
import { bundledSkills } from "../skills/discovery.js";

export type { PipelineDefinition, PipelineStep };

export const BUNDLED_DIR = path.join(import.meta.dirname, "bundled");

/** The prompt and conclusion schema of a step on one surface (standard or rich-v1). */
export interface StepSurface {
  prompt: string;
  conclusionSchema: Record<string, unknown>;
}

export interface LoadedStep {
  def: PipelineStep;
  id: string;
  conclusionField: string;
  kind: "agent" | "parallel_sub_pipeline";
  standard: StepSurface;
  rich: StepSurface;
}

export interface LoadedSubPipeline {
  name: string;
  def: PipelineSubPipeline;
  steps: LoadedStep[];
}

export interface LoadedPipeline {
  name: string;
  def: PipelineDefinition;
  steps: LoadedStep[];
  subPipelines: Map<string, LoadedSubPipeline>;
  /** Changes when the definition or a prompt changes: a saved run of another version is not resumed. */
  fingerprint: string;
}

const ajv = new Ajv2020({ strict: false, allErrors: true, allowUnionTypes: true });

const ANY_OBJECT = { type: "object" } as const;

/** Loads and checks <dir>/pipeline.yaml; ConfigError lists every problem with its path. */
export function loadPipeline(dir: string): LoadedPipeline {
  const file = path.join(dir, "pipeline.yaml");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    throw new ConfigError(`Cannot read ${file}.`);
  }
  let data: unknown;
  try {
    data = YAML.parse(text);
  } catch (error) {
    throw new ConfigError(`${file} is not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  const parsed = parsePipelineDefinition(data);
  if (!parsed.ok) {
    const problems = parsed.errors.slice(0, 10).map((e) => `${e.path} ${e.message}`);
    throw new ConfigError(`${file} does not match the pipeline schema: ${problems.join("; ")}`);
  }
  const def = parsed.value;
  const problems: string[] = [];
  const hash = createHash("sha256").update(text);
  const readPrompt = (rel: string | undefined, where: string): string => {
    if (rel === undefined) return "";
    const full = path.resolve(dir, rel);
    if (!full.startsWith(path.resolve(dir) + path.sep) || !existsSync(full)) {
      problems.push(`${where}: prompt file ${rel} not found`);
      return "";
    }
    const prompt = readFileSync(full, "utf8");
    hash.update(prompt);
    return prompt;
  };
  const compiles = (schema: Record<string, unknown>, where: string): void => {
    try {
      ajv.compile(schema);
    } catch (error) {
      problems.push(`${where}: conclusion_schema does not compile (${(error as Error).message})`);
    }
  };
  const loadSteps = (steps: PipelineStep[], base: string, known: Set<string>): LoadedStep[] => {
    const ids = new Set<string>();
    const loaded = steps.map((step, i): LoadedStep => {
      const where = `${base}/${i}`;
      if (ids.has(step.id)) problems.push(`${where}/id: duplicate step id ${step.id}`);
      ids.add(step.id);
      for (const [j, field] of (step.context_fields ?? []).entries()) {
        if (!known.has(field)) problems.push(`${where}/context_fields/${j}: unknown field ${field}`);
      }
      if (step.skill !== undefined && !bundledSkills().has(step.skill))
        problems.push(`${where}/skill: no bundled skill ${step.skill}`);
      known.add(step.conclusion_field);
      const schema = step.conclusion_schema ?? ANY_OBJECT;
      compiles(schema, where);
      const standard = { prompt: readPrompt(step.prompt, `${where}/prompt`), conclusionSchema: schema };
      const surface = (key: "a2a" | "a2a_rich", fallback: StepSurface): StepSurface => {
        const o = step.surface_overrides?.[key];
        if (o?.conclusion_schema) compiles(o.conclusion_schema, `${where}/surface_overrides/${key}`);
        return {
          prompt: o?.prompt
            ? readPrompt(o.prompt, `${where}/surface_overrides/${key}/prompt`)
            : fallback.prompt,
          conclusionSchema: o?.conclusion_schema ?? fallback.conclusionSchema,
        };
      };
      const a2a = surface("a2a", standard);
      return {
        def: step,
        id: step.id,
        conclusionField: step.conclusion_field,
        kind: step.type ?? "agent",
        standard: a2a,
        rich: surface("a2a_rich", a2a),
      };
    });
    for (const [i, step] of steps.entries()) {
      if (typeof step.forward === "string" && !ids.has(step.forward)) {
        problems.push(`${base}/${i}/forward: unknown step ${step.forward}`);
      }
    }
    return loaded;
  };

  const topFields = new Set<string>();
  const subPipelines = new Map<string, LoadedSubPipeline>();
  const steps = loadSteps(def.steps, "/steps", topFields);
  for (const [i, step] of def.steps.entries()) {
    if (step.type !== "parallel_sub_pipeline") continue;
    const name = step.sub_pipeline as string;
    const sub = def.sub_pipelines?.[name];
    if (!sub) {
      problems.push(`/steps/${i}/sub_pipeline: unknown sub-pipeline ${name}`);
      continue;
    }
    const iterated = sub.iterate_over.split(".")[0];
    const earlier = new Set(def.steps.slice(0, i).map((s) => s.conclusion_field));
    if (!earlier.has(iterated)) {
      problems.push(`/sub_pipelines/${name}/iterate_over: ${iterated} is not produced by an earlier step`);
    }
    const inherited = new Set([...(sub.context_fields_from_parent ?? []), "candidate"]);
    subPipelines.set(name, {
      name,
      def: sub,
      steps: loadSteps(sub.steps, `/sub_pipelines/${name}/steps`, inherited),
    });
  }
  if (problems.length > 0) throw new ConfigError(`${file}: ${problems.join("; ")}`);
  return { name: def.name, def, steps, subPipelines, fingerprint: hash.digest("hex").slice(0, 16) };
}

const bundled = new Map<string, LoadedPipeline>();
let bundledNames: string[] | undefined;

/** Names of the pipelines that ship with iac-code (they are part of the install: listed once). */
export function bundledPipelineNames(): string[] {
  bundledNames ??= readdirSync(BUNDLED_DIR)
    .filter((name) => existsSync(path.join(BUNDLED_DIR, name, "pipeline.yaml")))
    .sort();
  return [...bundledNames];
}

/** A bundled pipeline, loaded once; undefined when there is none of that name. */
export function bundledPipeline(name: string): LoadedPipeline | undefined {
  if (!bundledPipelineNames().includes(name)) return undefined;
  let loaded = bundled.get(name);
  if (!loaded) {
    loaded = loadPipeline(path.join(BUNDLED_DIR, name));
    bundled.set(name, loaded);
  }
  return loaded;
}

/** Fills {field} placeholders with the field's value (text as is, anything else as JSON). */
export function renderPrompt(template: string, values: Record<string, unknown>): string {
  return template.replace(/\{([a-z][a-z0-9_]*)\}/g, (whole, name: string) => {
    if (!(name in values)) return whole;
    const value = values[name];
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  });
}
