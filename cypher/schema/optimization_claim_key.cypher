// Uniqueness of (project, id) for prompt optimisation claims (the id is the prompt's name): one
// claim node per prompt, so two optimisations claiming the same prompt at once meet on it
// (prompts/claim_optimization).
// $params: none
CREATE CONSTRAINT optimization_claim_key IF NOT EXISTS
FOR (c:OptimizationClaim) REQUIRE (c.project, c.id) IS UNIQUE
