// The criteria a judge scores a plan on (HELM's annotation keys).
export const CRITERIA = ["accuracy", "completeness", "clarity"] as const;
