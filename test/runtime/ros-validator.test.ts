// The local static ROS template validator: structure, types and every kind of
// reference, with precise paths and lines.
import { expect } from "chai";
import { formatReport, validateRosTemplate } from "../../src/runtime/tools/ros-validator.js";
import { loadDemoScript } from "../../src/runtime/index.js";

const VALID = `ROSTemplateFormatVersion: '2015-09-01'
Parameters:
  Cidr:
    Type: String
    Default: 192.168.0.0/16
    AllowedValues: [192.168.0.0/16, 10.0.0.0/8]
Resources:
  Vpc:
    Type: ALIYUN::ECS::VPC
    Properties:
      CidrBlock: { Ref: Cidr }
  VSwitch:
    Type: ALIYUN::ECS::VSwitch
    DependsOn: Vpc
    Properties:
      VpcId: { Ref: Vpc }
      ZoneId: { Ref: ALIYUN::Region }
      VSwitchName:
        Fn::Sub: ['\${Prefix}-\${ALIYUN::StackName}-\${Vpc.VpcId}', { Prefix: demo }]
Outputs:
  VpcId:
    Value: { 'Fn::GetAtt': [Vpc, VpcId] }
  Name:
    Value: { 'Fn::GetAtt': VSwitch.VSwitchName }
`;

function errorsOf(text: string) {
  return validateRosTemplate(text).findings.filter((f) => f.severity === "error");
}

describe("runtime: ROS template validator", () => {
  it("accepts a valid template and the demo template", () => {
    const report = validateRosTemplate(VALID);
    expect(report).to.deep.include({ valid: true, findings: [], resourceCount: 2, parameterNames: ["Cidr"] });
    expect(formatReport(report)).to.equal("The template is valid (2 resources, 1 parameters, 2 outputs).");
    const demo = loadDemoScript().rules.find((r) => r.name === "start");
    const write = demo?.reply.find((s) => "toolCall" in s);
    const content = write && "toolCall" in write ? String(write.toolCall.input.content) : "";
    expect(validateRosTemplate(content).valid).to.equal(true);
  });

  it("names a broken Ref precisely, with its path and line", () => {
    const broken = VALID.replace("VpcId: { Ref: Vpc }", "VpcId: { Ref: Vpcc }");
    const [finding, ...rest] = errorsOf(broken);
    expect(rest).to.deep.equal([]);
    expect(finding).to.deep.equal({
      severity: "error",
      path: "Resources/VSwitch/Properties/VpcId/Ref",
      line: 16,
      message: 'Ref target "Vpcc" is not a parameter, resource or pseudo parameter of this template.',
    });
    expect(formatReport(validateRosTemplate(broken))).to.include(
      '- error (line 16) at Resources/VSwitch/Properties/VpcId/Ref: Ref target "Vpcc"',
    );
  });

  it("checks Fn::GetAtt, Fn::Sub, DependsOn, Condition and Fn::FindInMap targets", () => {
    const text = `ROSTemplateFormatVersion: '2015-09-01'
Resources:
  Vpc:
    Type: ALIYUN::ECS::VPC
    DependsOn: [Nope]
    Condition: Missing
    Properties:
      A: { 'Fn::GetAtt': [Ghost, Id] }
      B: { 'Fn::GetAtt': Ghost2.Id }
      C: { 'Fn::Sub': 'x-\${Unknown}-\${Vpc.VpcId}' }
      D: { 'Fn::FindInMap': [NoMap, a, b] }
Outputs:
  O:
    Value: { 'Fn::GetAtt': [Vpc, VpcId] }
    Condition: AlsoMissing
`;
    expect(errorsOf(text).map((f) => `${f.path}: ${f.message}`)).to.deep.equal([
      'Resources/Vpc/DependsOn/0: DependsOn target "Nope" is not a resource.',
      'Resources/Vpc/Condition: Condition "Missing" is not declared in Conditions.',
      'Outputs/O/Condition: Condition "AlsoMissing" is not declared in Conditions.',
      'Resources/Vpc/Properties/A/Fn::GetAtt: Fn::GetAtt target "Ghost" is not a resource of this template.',
      'Resources/Vpc/Properties/B/Fn::GetAtt: Fn::GetAtt target "Ghost2" is not a resource of this template.',
      'Resources/Vpc/Properties/C/Fn::Sub: Fn::Sub variable "${Unknown}" names no parameter, resource or local variable.',
      'Resources/Vpc/Properties/D/Fn::FindInMap: Fn::FindInMap map "NoMap" is not declared in Mappings.',
    ]);
  });

  it("checks the structure: version, resource types, parameters, outputs", () => {
    const text = `ROSTemplateFormatVersion: '2010-09-09'
Parameters:
  Size:
    Type: Integer
  Mode:
    Type: String
    Default: fast
    AllowedValues: [slow]
  Count:
    Type: Number
    Default: many
Resources:
  Bucket:
    Type: AWS::S3::Bucket
  Other:
    Properties: {}
Outputs:
  Nothing:
    Description: no value
Extra: 1
`;
    const findings = validateRosTemplate(text).findings.map((f) => `${f.severity} ${f.path}: ${f.message}`);
    expect(findings).to.deep.equal([
      "warning Extra: Unknown top-level section Extra.",
      'error ROSTemplateFormatVersion: ROSTemplateFormatVersion must be "2015-09-01".',
      'error Parameters/Size/Type: Parameter Size has an unknown Type "Integer".',
      "error Parameters/Mode/Default: Default of Mode is not one of its AllowedValues.",
      "error Parameters/Count/Default: Default of Count is not a number.",
      'error Resources/Bucket/Type: Resource Bucket has type "AWS::S3::Bucket"; ROS types look like ALIYUN::ECS::VPC (or DATASOURCE::…, MODULE::…, Custom::…).',
      "error Resources/Other: Resource Other has no Type.",
      "error Outputs/Nothing: Output Nothing has no Value.",
    ]);
  });

  it("reports missing sections and syntax errors with their line", () => {
    expect(errorsOf("Description: nothing\n").map((f) => f.message)).to.deep.equal([
      'ROSTemplateFormatVersion is missing; it must be "2015-09-01".',
      "Resources is missing; a template declares at least one resource.",
    ]);
    const [syntax] = errorsOf("ROSTemplateFormatVersion: '2015-09-01'\nResources:\n  Vpc: [unclosed\n");
    expect(syntax.message).to.match(/^Syntax error: /);
    expect(syntax.line).to.be.a("number");
    expect(errorsOf("- a\n- b\n")[0].message).to.equal(
      "The template must be a mapping (an object) at the top level.",
    );
    expect(errorsOf("a: 1\n---\nb: 2\n")[0].message).to.equal(
      "The template must be exactly one YAML or JSON document.",
    );
  });

  it("validates JSON templates too", () => {
    const json = JSON.stringify({
      ROSTemplateFormatVersion: "2015-09-01",
      Resources: { Vpc: { Type: "ALIYUN::ECS::VPC", Properties: { X: { Ref: "Missing" } } } },
    });
    const [finding] = errorsOf(json);
    expect(finding).to.include({ path: "Resources/Vpc/Properties/X/Ref", line: 1 });
  });
});
