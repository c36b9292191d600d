# The public names of fluidnet.proof (read by type checkers and by fluidnet._lazy).

from .region import certify_region as certify_region
from .chart import certified_chart as certified_chart
from .checker import check_certificate as check_certificate
from .certificate import RegionCertificate as RegionCertificate
from .certificate import Leaf as Leaf
from .certificate import CertificateError as CertificateError
