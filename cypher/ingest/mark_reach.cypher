// One step of keeping reaches_memory (a memory descends from the unit, through any number of
// operations) true on exactly the units it holds for, after a batch wrote its operations and
// units. From each unit in $ids that reaches a memory, the inputs of the operations that produced
// it reach one too: those still marked false are set and returned, and the writer runs this again
// on them until nothing changes (a memory's ancestry is a few operations deep, so this is a few
// round trips per batch). Marks only ever turn true here; a unit whose mark is null was stored
// before marks existed and is left to the start-up backfill (migrations/backfill_reach).
// $params: project (string),
//          ids (list of string: the outputs of the batch's new operations and the memories it
//               defined on the first step; the units the previous step marked after that)
// The walk starts from $ids (the unit key's index) and expands from each inside CALL (s): on a
// young, fast-growing graph the planner was seen to choose plans that read every unit marked
// false, 10x slower, in some runs and not in others.
UNWIND $ids AS id
MATCH (s:Unit {project: $project, id: id})
USING INDEX s:Unit(project, id)
WHERE s.reaches_memory
CALL (s) {
  MATCH (s)-[:PRODUCED_BY]->(:Operation)-[:CONSUMES]->(x:Unit)
  WHERE x.reaches_memory = false
  RETURN x
}
WITH DISTINCT x
SET x.reaches_memory = true
RETURN collect(x.id) AS marked
