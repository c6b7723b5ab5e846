// Finds a project's units of one kind that reach no memory (reaches_memory = false), in id
// order (audit construction_loss: messages). The writer keeps reaches_memory on every unit, so a
// page of lost messages is an index seek, not a walk from every message of the project.
// $params: none
CREATE INDEX unit_reach IF NOT EXISTS
FOR (u:Unit) ON (u.project, u.kind, u.reaches_memory, u.id)
