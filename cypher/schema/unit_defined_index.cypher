// Finds a project's units known only by id (defined = false, audit dangling_units) in id order
// without reading the defined ones. The writer sets defined on every unit it stores.
// $params: none
CREATE INDEX unit_defined IF NOT EXISTS FOR (u:Unit) ON (u.project, u.defined, u.id)
