// What the simulated ROS endpoint answers to GetTemplateParameterConstraints:
// for each template parameter a resource property refers to (Ref), the
// values that property accepts in the region, shaped like ROS's answer
// (ParameterConstraints[] with ParameterKey, Type, AllowedValues,
// AssociationParameterNames, Behavior, OriginalConstraints). The value lists
// are a small fixed catalogue, not live inventory.
import YAML from "yaml";
import { DEFAULT_REGION } from "./credentials.js";

type Values = (regionId: string) => string[];

const zones: Values = (region) => ["h", "i", "j", "k"].map((z) => `${region}-${z}`);

/** Property → allowed values, and the property it depends on (ROS associates them). */
const CATALOGUE: Record<string, Record<string, { values: Values; dependsOn?: string }>> = {
  "ALIYUN::ECS::Instance": {
    ZoneId: { values: zones },
    InstanceType: {
      values: () => ["ecs.g7.large", "ecs.g7.xlarge", "ecs.c7.large", "ecs.r7.large", "ecs.e-c1m2.large"],
      dependsOn: "ZoneId",
    },
    SystemDiskCategory: {
      values: () => ["cloud_essd", "cloud_efficiency", "cloud_ssd"],
      dependsOn: "InstanceType",
    },
    InternetChargeType: { values: () => ["PayByTraffic", "PayByBandwidth"] },
  },
  "ALIYUN::ECS::InstanceGroup": {
    ZoneId: { values: zones },
    InstanceType: { values: () => ["ecs.g7.large", "ecs.g7.xlarge", "ecs.c7.large"], dependsOn: "ZoneId" },
  },
  "ALIYUN::ECS::VSwitch": { ZoneId: { values: zones } },
  "ALIYUN::RDS::DBInstance": {
    ZoneId: { values: zones },
    Engine: { values: () => ["MySQL", "PostgreSQL", "SQLServer", "MariaDB"] },
    EngineVersion: { values: () => ["5.7", "8.0"], dependsOn: "Engine" },
    DBInstanceClass: {
      values: () => ["mysql.n2.medium.1", "mysql.n2.large.1", "mysql.n4.medium.2c"],
      dependsOn: "EngineVersion",
    },
    DBInstanceStorageType: { values: () => ["cloud_essd", "cloud_ssd", "local_ssd"] },
  },
  "ALIYUN::REDIS::Instance": {
    ZoneId: { values: zones },
    InstanceClass: { values: () => ["redis.master.small.default", "redis.master.mid.default"] },
  },
};

interface Use {
  resource: string;
  type: string;
  property: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function simulatedParameterConstraints(
  body: string,
  params: Record<string, unknown>,
): Record<string, unknown>[] {
  let template: unknown;
  try {
    template = YAML.parse(body);
  } catch {
    template = undefined;
  }
  if (!isObject(template)) return [];
  const regionId = typeof params.RegionId === "string" ? params.RegionId : DEFAULT_REGION;
  const declared = isObject(template.Parameters) ? template.Parameters : {};
  const filter = Object.entries(params)
    .filter(([k]) => /^ParametersKeyFilter\.\d+$/.test(k))
    .map(([, v]) => String(v));
  const keys = Object.keys(declared).filter((k) => filter.length === 0 || filter.includes(k));

  // Which resource properties Ref each parameter.
  const uses = new Map<string, Use[]>();
  const resources = isObject(template.Resources) ? template.Resources : {};
  for (const [resource, definition] of Object.entries(resources)) {
    if (!isObject(definition) || typeof definition.Type !== "string" || !isObject(definition.Properties))
      continue;
    for (const [property, value] of Object.entries(definition.Properties)) {
      if (isObject(value) && typeof value.Ref === "string") {
        const list = uses.get(value.Ref) ?? [];
        list.push({ resource, type: definition.Type, property });
        uses.set(value.Ref, list);
      }
    }
  }
  // The parameter that feeds a property of the same resource.
  const parameterOf = (resource: string, property: string): string | undefined => {
    for (const [key, list] of uses) {
      if (list.some((u) => u.resource === resource && u.property === property)) return key;
    }
    return undefined;
  };

  return keys.map((key) => {
    const declaredType = isObject(declared[key]) ? declared[key].Type : undefined;
    const base = { ParameterKey: key, Type: typeof declaredType === "string" ? declaredType : "String" };
    const known = (uses.get(key) ?? []).filter((u) => CATALOGUE[u.type]?.[u.property]);
    if (known.length === 0) {
      return {
        ...base,
        Behavior: "NotSupport",
        BehaviorReason: "No resource property of a supported type refers to this parameter.",
        NotSupportResources: (uses.get(key) ?? []).map((u) => ({
          ResourceType: u.type,
          PropertyName: u.property,
        })),
      };
    }
    const original = known.map((u) => ({
      ResourceName: u.resource,
      ResourceType: u.type,
      PropertyName: u.property,
      AllowedValues: CATALOGUE[u.type][u.property].values(regionId),
    }));
    // A value must suit every property that uses the parameter.
    const allowed = original
      .map((o) => o.AllowedValues)
      .reduce((acc, values) => acc.filter((v) => values.includes(v)));
    const associations = [
      ...new Set(
        known
          .map((u) => CATALOGUE[u.type][u.property].dependsOn)
          .map((dep, i) => (dep ? parameterOf(known[i].resource, dep) : undefined))
          .filter((p): p is string => p !== undefined && p !== key),
      ),
    ];
    return {
      ...base,
      AllowedValues: allowed,
      ...(associations.length > 0 ? { AssociationParameterNames: associations } : {}),
      OriginalConstraints: original,
    };
  });
}
