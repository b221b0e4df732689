NAME          FRACINF
ROWS
 N  obj
 L  c1
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
    x         obj       -1             c1        1
    y         obj       -1             c1        1
    MARKER                 'MARKER'                 'INTEND'
RHS
    rhs       c1        0.49
BOUNDS
 UP bnd       x         0.49
 UP bnd       y         0.49
ENDATA
