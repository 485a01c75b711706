import { expect } from "chai";
import {
  LANGUAGES,
  catalogKeys,
  parseAcceptLanguage,
  resolveLanguage,
  normalizeLanguage,
  t,
} from "../src/i18n/index.js";

describe("i18n", () => {
  it("translates every English key into every supported language", () => {
    const english = catalogKeys("en");
    for (const lang of LANGUAGES) expect(catalogKeys(lang), lang).to.deep.equal(english);
  });

  it("normalises language tags to their primary subtag", () => {
    expect(normalizeLanguage(" zh-CN ")).to.equal("zh");
    expect(normalizeLanguage("pt_BR")).to.equal("pt");
    expect(normalizeLanguage("ko")).to.equal(undefined);
  });

  it("picks the highest-quality supported Accept-Language entry", () => {
    expect(parseAcceptLanguage("ja-JP, en;q=0.5")).to.equal("ja");
    expect(parseAcceptLanguage("zh;q=0, en;q=0.2, ja;q=1")).to.equal("ja");
    expect(parseAcceptLanguage("en;q=0.2, zh-CN;q=1")).to.equal("zh");
    expect(parseAcceptLanguage("ko, xx;q=0.9")).to.equal(undefined);
    expect(parseAcceptLanguage("de;q=abc, fr;q=0.1")).to.equal("fr");
    expect(parseAcceptLanguage("*")).to.equal("en");
  });

  it("prefers the explicit language over Accept-Language", () => {
    expect(resolveLanguage("fr", "ja")).to.equal("fr");
    expect(resolveLanguage("klingon", "ja")).to.equal("ja");
    expect(resolveLanguage(undefined, undefined)).to.equal("en");
  });

  it("falls back to English and fills placeholders", () => {
    expect(t("fr", "common.unexpectedError")).to.equal("Une erreur inattendue s'est produite.");
    expect(t("de", "no.such.key")).to.equal("no.such.key");
  });
});
