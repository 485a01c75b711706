// Signs the server's two cards once at start-up: the public card (re-rendered
// so its ETag covers the signature) and the extended card, each with its own
// signature over its own canonical form.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { encodeProtoJson, pb } from "../../contract/index.js";
import { renderCard, type AgentCards } from "../core/card.js";
import { signatureForCard, type CardSigningKey } from "./sign-card.js";

export async function signCards(cards: AgentCards, key: CardSigningKey): Promise<AgentCards> {
  const publicSignature = await signatureForCard(cards.publicCard.json, key);
  const publicJson: JsonObject = { ...cards.publicCard.json, signatures: [{ ...publicSignature }] };
  const extendedJson = encodeProtoJson(pb.AgentCardSchema, cards.extendedCard);
  const extendedSignature = await signatureForCard(extendedJson, key);
  const extendedCard = create(pb.AgentCardSchema, {
    ...cards.extendedCard,
    signatures: [create(pb.AgentCardSignatureSchema, extendedSignature)],
  });
  return {
    publicCard: renderCard(publicJson, new Date(cards.publicCard.lastModified)),
    extendedCard,
  };
}
