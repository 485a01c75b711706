// Server-generated, user-visible text in seven languages. Catalogs live in
// src/i18n/catalogs/<domain>/<lang>.json (one domain per area of the server);
// keys are global, English is the fallback. The language of a request comes
// from its explicit preference first, then Accept-Language, then the default.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";

export const LANGUAGES = ["en", "zh", "es", "fr", "de", "ja", "pt"] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = "en";

type Catalog = Record<string, string>;

const CATALOG_ROOT = path.join(import.meta.dirname, "catalogs");

function loadCatalogs(): Record<Language, Catalog> {
  const catalogs = Object.fromEntries(LANGUAGES.map((l) => [l, {}])) as Record<Language, Catalog>;
  for (const domain of readdirSync(CATALOG_ROOT).sort()) {
    for (const lang of LANGUAGES) {
      const file = path.join(CATALOG_ROOT, domain, `${lang}.json`);
      let entries: Catalog;
      try {
        entries = JSON.parse(readFileSync(file, "utf8")) as Catalog;
      } catch {
        continue;
      }
      for (const [key, text] of Object.entries(entries)) {
        if (key in catalogs[lang])
          throw new Error(`i18n key ${key} is defined twice (${domain}/${lang}.json)`);
        catalogs[lang][key] = text;
      }
    }
  }
  return catalogs;
}

const catalogs = loadCatalogs();

/** Keys of every catalog, per language (used by the completeness test). */
export function catalogKeys(lang: Language): string[] {
  return Object.keys(catalogs[lang]).sort();
}

export function isLanguage(value: unknown): value is Language {
  return typeof value === "string" && (LANGUAGES as readonly string[]).includes(value);
}

/** "zh-CN" -> "zh", "pt_BR" -> "pt"; undefined when unsupported. */
export function normalizeLanguage(tag: string | null | undefined): Language | undefined {
  if (typeof tag !== "string") return undefined;
  const primary = tag.trim().toLowerCase().replace(/_/g, "-").split("-")[0];
  return isLanguage(primary) ? primary : undefined;
}

/**
 * The best supported language of an Accept-Language header: highest q wins,
 * ties keep the earlier entry; q <= 0, q > 1 and unparsable q are dropped;
 * "*" stands for the default language.
 */
export function parseAcceptLanguage(header: string | null | undefined): Language | undefined {
  if (typeof header !== "string") return undefined;
  let best: { lang: Language; q: number } | undefined;
  for (const item of header.split(",")) {
    const [tag, ...params] = item.split(";").map((s) => s.trim());
    if (!tag) continue;
    let q = 1;
    const qParam = params.find((p) => p.toLowerCase().startsWith("q="));
    if (qParam !== undefined) {
      const parsed = Number(qParam.slice(2));
      q = Number.isNaN(parsed) ? 0 : parsed;
    }
    if (!Number.isFinite(q) || q <= 0 || q > 1) continue;
    const lang = tag === "*" ? DEFAULT_LANGUAGE : normalizeLanguage(tag);
    if (lang && (!best || q > best.q)) best = { lang, q };
  }
  return best?.lang;
}

/** preferredLanguage beats Accept-Language, which beats the default. */
export function resolveLanguage(
  preferred: string | null | undefined,
  acceptLanguage: string | null | undefined,
  fallback: Language = DEFAULT_LANGUAGE,
): Language {
  return normalizeLanguage(preferred) ?? parseAcceptLanguage(acceptLanguage) ?? fallback;
}

/** Localised text for key, with {name} placeholders filled; English, then the key, as fallbacks. */
export function t(lang: Language, key: string, params: Record<string, string | number> = {}): string {
  const template = catalogs[lang][key] ?? catalogs.en[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? String(params[name]) : whole,
  );
}
