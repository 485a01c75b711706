// The console's highlighter (console/src/tokenize.ts, run in Node): the tokens
// of ROS YAML, JSON and Terraform HCL, lossless (they join back to the input),
// and the language picked from a file name.
import { expect } from "chai";
import { languageOf, tokenize, type CodeLanguage } from "../../console/src/tokenize.js";

function classes(code: string, lang: CodeLanguage): Record<string, string[]> {
  const tokens = tokenize(code, lang);
  expect(tokens.map(([text]) => text).join("")).to.equal(code);
  const byClass: Record<string, string[]> = {};
  for (const [text, cls] of tokens) if (cls) (byClass[cls] ??= []).push(text);
  return byClass;
}

describe("console highlighter", () => {
  it("YAML: keys (also in flow mappings), quoted strings with #, numbers, literals, comments", () => {
    const yaml = [
      "# a ROS template",
      "ROSTemplateFormatVersion: '2015-09-01'",
      'Description: "one # not a comment"',
      "Resources:",
      "  Vpc:",
      "    Type: ALIYUN::ECS::VPC",
      "    Properties:",
      "      Count: 2",
      "      Enabled: true",
      "      VpcId: { Ref: Vpc }",
      "      Url: http://example.com/a # trailing",
      "",
    ].join("\n");
    const c = classes(yaml, "yaml");
    expect(c.key).to.deep.equal([
      "ROSTemplateFormatVersion",
      "Description",
      "Resources",
      "Vpc",
      "Type",
      "Properties",
      "Count",
      "Enabled",
      "VpcId",
      "Ref",
      "Url",
    ]);
    expect(c.string).to.deep.equal(["'2015-09-01'", '"one # not a comment"']);
    expect(c.comment).to.deep.equal(["# a ROS template", "# trailing"]);
    expect(c.number).to.deep.equal(["2"]);
    expect(c.literal).to.deep.equal(["true"]);
  });

  it("JSON: keys apart from string values, numbers with exponents, literals", () => {
    const c = classes('{"a": "b", "n": -1.5e3, "t": [true, null, "x:y"]}', "json");
    expect(c.key).to.deep.equal(['"a"', '"n"', '"t"']);
    expect(c.string).to.deep.equal(['"b"', '"x:y"']);
    expect(c.number).to.deep.equal(["-1.5e3"]);
    expect(c.literal).to.deep.equal(["true", "null"]);
  });

  it("HCL: block keywords, attribute names, strings, heredocs, comments", () => {
    const hcl = [
      "# network",
      'resource "alicloud_vpc" "main" {',
      '  cidr_block = "10.0.0.0/16" // inline',
      "  count      = 2",
      "  information = var.info",
      "  tags = {",
      "    Name = <<EOT",
      "hello",
      "EOT",
      "  }",
      "}",
      "",
    ].join("\n");
    const c = classes(hcl, "hcl");
    expect(c.keyword).to.deep.equal(["resource"]);
    expect(c.key).to.deep.equal(["cidr_block", "count", "information", "tags", "Name"]);
    expect(c.string).to.deep.equal(['"alicloud_vpc"', '"main"', '"10.0.0.0/16"', "<<EOT\nhello\nEOT"]);
    expect(c.comment).to.deep.equal(["# network", "// inline"]);
    expect(c.number).to.deep.equal(["2"]);
  });

  it("picks the language from the file name, else JSON when it looks like JSON, else plain text", () => {
    expect(languageOf("stack/template.yaml")).to.equal("yaml");
    expect(languageOf("a.YML")).to.equal("yaml");
    expect(languageOf("main.tf")).to.equal("hcl");
    expect(languageOf("prod.tfvars")).to.equal("hcl");
    expect(languageOf("params.json")).to.equal("json");
    expect(languageOf("result", '  {"ok": true}')).to.equal("json");
    expect(languageOf("notes.txt", "hello")).to.equal("text");
    expect(classes("a: b", "text")).to.deep.equal({});
  });
});
