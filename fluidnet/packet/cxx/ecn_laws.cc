// Window laws driven by ECN marks, as ns-3 congestion control (TcpCongestionOps), compiled at run
// time by cppyy (fluidnet.packet).
//
//   fluidnet::TcpGeneralized  the generalized TCP of Misra, Baras & Ott (Globecom 2000, (1)-(2)):
//                             every unmarked ACK adds c1 W^alpha packets to the window W, every
//                             marked ACK takes c2 W^beta away. The receivers echo every packet's
//                             mark on its own ACK (DCTCP's receiver, RFC 8257, one ACK per
//                             segment); an ACK that acknowledges k segments is k events, the mark
//                             belonging to the last. The law owns the window (a real number W,
//                             written to the socket after every ACK): slow start (one packet per
//                             ACK) until the first mark, then (1)-(2) only. The paper ignores
//                             losses; here a fast retransmit halves W (TCP's reaction) and a
//                             timeout restarts it from one packet with slow start up to half the
//                             window before it.
//   fluidnet::TcpRm           Zimmermann's TCP/RM (2005, Sec 5.6.3): NewReno whose congestion
//                             avoidance adds kappa RTT w / cwnd packets per unmarked ACK (5.6.1)
//                             and whose reaction to an ECN echo (once per window, RFC 3168
//                             receivers) takes the window down by kappa cwnd (5.6.2) instead of
//                             halving it; losses as NewReno. RTT is the smoothed RTT.

namespace fluidnet
{
using namespace ns3;

class TcpGeneralized : public TcpCongestionOps
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::TcpGeneralized")
                .SetParent<TcpCongestionOps>()
                .SetGroupName("Fluidnet")
                .AddConstructor<TcpGeneralized>()
                .AddAttribute("C1",
                              "Increase coefficient c1 (per unmarked ACK, packets)",
                              DoubleValue(1.0),
                              MakeDoubleAccessor(&TcpGeneralized::m_c1),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("C2",
                              "Decrease coefficient c2 (per marked ACK)",
                              DoubleValue(0.5),
                              MakeDoubleAccessor(&TcpGeneralized::m_c2),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Alpha",
                              "Exponent alpha of the increase c1 W^alpha",
                              DoubleValue(-1.0),
                              MakeDoubleAccessor(&TcpGeneralized::m_alpha),
                              MakeDoubleChecker<double>())
                .AddAttribute("Beta",
                              "Exponent beta of the decrease c2 W^beta",
                              DoubleValue(1.0),
                              MakeDoubleAccessor(&TcpGeneralized::m_beta),
                              MakeDoubleChecker<double>());
        return tid;
    }

    TcpGeneralized() = default;
    TcpGeneralized(const TcpGeneralized& other) = default;

    std::string GetName() const override
    {
        return "TcpGeneralized";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpGeneralized>(this);
    }

    void Init(Ptr<TcpSocketState> tcb) override
    {
        tcb->m_useEcn = TcpSocketState::On;
        tcb->m_ecnMode = TcpSocketState::DctcpEcn;
        tcb->m_ectCodePoint = TcpSocketState::Ect0;
    }

    bool HasCongControl() const override
    {
        return true;
    }

    // The increment c1 W^alpha of an unmarked ACK, eq (1).
    double Increment(double W) const
    {
        return m_c1 * std::pow(W, m_alpha);
    }

    // The decrement c2 W^beta of a marked ACK, eq (2).
    double Decrement(double W) const
    {
        return m_c2 * std::pow(W, m_beta);
    }

    // ACK events (acknowledged segments) and marked ACKs seen so far.
    uint64_t GetAcks() const
    {
        return m_acks;
    }

    uint64_t GetMarks() const
    {
        return m_marks;
    }

    void CongControl(Ptr<TcpSocketState> tcb,
                     const TcpRateOps::TcpRateConnection& rc,
                     const TcpRateOps::TcpRateSample& rs) override
    {
        double seg = tcb->m_segmentSize;
        if (!m_started) // the window TCP starts with (set when the connection opens)
        {
            m_w = std::max(1.0, tcb->m_cWnd.Get() / seg);
            m_started = true;
        }
        else if (tcb->m_cWnd.Get() != m_written) // a timeout: TCP set one segment
        {
            m_ssthresh = std::max(2.0, m_w / 2);
            m_w = std::max(1.0, tcb->m_cWnd.Get() / seg);
            m_slowStart = true;
        }
        uint64_t bytes = m_partial + rs.m_ackedSacked;
        auto events = static_cast<uint64_t>(bytes / tcb->m_segmentSize);
        m_partial = bytes % tcb->m_segmentSize;
        bool marked = tcb->m_ecnState == TcpSocketState::ECN_ECE_RCVD;
        for (uint64_t k = 0; k < events; ++k)
        {
            bool mark = marked && k + 1 == events;
            ++m_acks;
            if (mark)
            {
                ++m_marks;
                m_slowStart = false;
                m_w -= Decrement(m_w);
            }
            else if (m_slowStart)
            {
                m_w += 1.0;
                m_slowStart = m_w < m_ssthresh;
            }
            else
            {
                m_w += Increment(m_w);
            }
            m_w = std::max(m_w, 1.0);
        }
        m_written = static_cast<uint32_t>(std::min(m_w * seg, 4e9));
        tcb->m_cWnd = m_written;
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_RECOVERY && m_started)
        {
            m_w = std::max(1.0, m_w / 2);
            m_slowStart = false;
            m_written = static_cast<uint32_t>(m_w * tcb->m_segmentSize);
            tcb->m_cWnd = m_written;
        }
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        return std::max(2 * tcb->m_segmentSize, tcb->m_cWnd.Get() / 2);
    }

  private:
    double m_c1{1.0};
    double m_c2{0.5};
    double m_alpha{-1.0};
    double m_beta{1.0};
    double m_w{1.0};
    double m_ssthresh{std::numeric_limits<double>::infinity()};
    bool m_started{false};
    bool m_slowStart{true};
    uint32_t m_written{0};
    uint64_t m_partial{0};
    uint64_t m_acks{0};
    uint64_t m_marks{0};
};

NS_OBJECT_ENSURE_REGISTERED(TcpGeneralized);

class TcpRm : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("fluidnet::TcpRm")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Fluidnet")
                                .AddConstructor<TcpRm>()
                                .AddAttribute("W",
                                              "Willingness to pay w (packets/s)",
                                              DoubleValue(20.0),
                                              MakeDoubleAccessor(&TcpRm::m_w),
                                              MakeDoubleChecker<double>(0.0))
                                .AddAttribute("Kappa",
                                              "Gain kappa-bar",
                                              DoubleValue(0.1),
                                              MakeDoubleAccessor(&TcpRm::m_kappa),
                                              MakeDoubleChecker<double>(0.0, 1.0));
        return tid;
    }

    TcpRm() = default;
    TcpRm(const TcpRm& other) = default;

    std::string GetName() const override
    {
        return "TcpRm";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpRm>(this);
    }

    // An ECN echo (the socket enters CWR with the state still open): the window goes down by
    // kappa cwnd, (5.6.2); a loss: half the flight, as NewReno.
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        bool echo = tcb->m_ecnState == TcpSocketState::ECN_ECE_RCVD &&
                    (tcb->m_congState == TcpSocketState::CA_OPEN ||
                     tcb->m_congState == TcpSocketState::CA_DISORDER);
        double target = echo ? (1.0 - m_kappa) * tcb->m_cWnd.Get() : bytesInFlight / 2.0;
        return std::max(2 * tcb->m_segmentSize, static_cast<uint32_t>(target));
    }

  protected:
    // (5.6.1): kappa RTT w / cwnd packets per acknowledged segment.
    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (segmentsAcked == 0)
        {
            return;
        }
        double seg = tcb->m_segmentSize;
        double rtt = tcb->m_srtt.Get().GetSeconds();
        double cwnd = std::max(1.0, tcb->m_cWnd.Get() / seg);
        m_extra += segmentsAcked * m_kappa * rtt * m_w / cwnd * seg;
        auto whole = static_cast<uint32_t>(m_extra);
        m_extra -= whole;
        tcb->m_cWnd += whole;
    }

  private:
    double m_w{20.0};
    double m_kappa{0.1};
    double m_extra{0.0};
};

NS_OBJECT_ENSURE_REGISTERED(TcpRm);

} // namespace fluidnet
