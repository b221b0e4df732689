NAME          FRACOPT
ROWS
 N  obj
 L  c1
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
    x         c1        1
    z         obj       1              c1        -1
    MARKER                 'MARKER'                 'INTEND'
RHS
    rhs       c1        0
BOUNDS
 UP bnd       x         0.49
 UP bnd       z         1
ENDATA
