// Window laws of two seed papers as ns-3 congestion control (TcpCongestionOps), compiled at run
// time by cppyy.
//
//   fluidnet::TcpKelly        Kunniyur & Srikant (IEEE/ACM ToN 11(5), 2003), the window laws
//                             (12)/(13): every ACK adds kappa c w d^2 / W packets (c = nu for the
//                             utility -1/x^nu, c = 1 for log x, nu = 0), every congestion signal
//                             subtracts kappa beta W^nu d^(1 - nu) packets; d is the law's
//                             round-trip delay in its time unit, w the weight w_r/beta_r. The
//                             signals are losses or, with ReactToMarks, ECN marks only ((40)/(41):
//                             losses are taken as random and ignored). A loss is the paper's
//                             negative acknowledgment: every data packet of the flow the network
//                             drops, reported by fluidnet::Experiment (TCP's own loss detection
//                             miscounts: it resends some segments that were not lost and, after a
//                             timeout, resends a whole window); it counts in the ACKs A_r of
//                             (12)/(13) too. The ACKs are every ACK segment received (one per data
//                             packet that arrives, duplicates too, with one ACK per segment), so
//                             that every packet sent brings one increment; a mark is an ACK with
//                             ECE (one per marked packet with DCTCP receivers, RFC 8257). The law
//                             owns the window: W is
//                             a real number, the socket's window is W rounded to whole packets (at
//                             least one), written after every ACK (CongControl), so TCP's own
//                             reductions (fast recovery, CWR, timeout) do not apply.
//   fluidnet::TcpSlidingMode  Ye et al.'s TCP control law of the binary-feedback family (Sec II,
//                             (6)/(7) and (10)/(11)) in steps of one RTT: without congestion, slow
//                             start multiplies the window by 1 + alpha below the threshold (alpha
//                             per ACK) and congestion avoidance adds mu packets per RTT above it
//                             (mu/W per ACK); a congestion event (loss, or ECN echo, once per window
//                             as TCP) multiplies it by 1 - beta. The threshold is TCP's dynamic one
//                             (1 - beta of the flight at the event) or, with FixedThreshold > 0, the
//                             rate x_s (packets/s) times the smoothed RTT (Sec IV). With alpha = 1,
//                             mu = 1, beta = 1/2 this is NewReno (TCP-Reno's window law).
//   fluidnet::TcpMrg          the minimum-rate-guaranteed law (20)-(22): below the target rate Theta
//                             (packets/s; the rate is cwnd / smoothed RTT, as the paper's ns-2
//                             implementation) the increase of the law above becomes
//                             z (f - 1 + r) with r = RMax: r (alpha + beta) - beta per ACK in slow
//                             start, (r - 1) beta + r mu / W per ACK in congestion avoidance ((22)
//                             for alpha = 1, beta = 1/2: (3 r - 1)/2 and (r - 1)/2 + r/W); at or
//                             above Theta, and on congestion, the TCP law.

namespace fluidnet
{
using namespace ns3;

class TcpKelly : public TcpCongestionOps, public SignalListener
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::TcpKelly")
                .SetParent<TcpCongestionOps>()
                .SetGroupName("Fluidnet")
                .AddConstructor<TcpKelly>()
                .AddAttribute("Kappa",
                              "Gain kappa (per time unit of the law)",
                              DoubleValue(1.0),
                              MakeDoubleAccessor(&TcpKelly::m_kappa),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Weight",
                              "Weight w/beta_r (packets per time unit for log x)",
                              DoubleValue(1.0),
                              MakeDoubleAccessor(&TcpKelly::m_weight),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Beta",
                              "Price per congestion signal beta",
                              DoubleValue(0.5),
                              MakeDoubleAccessor(&TcpKelly::m_beta),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Nu",
                              "Exponent of the utility -1/x^nu (0: log x)",
                              DoubleValue(0.0),
                              MakeDoubleAccessor(&TcpKelly::m_nu),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Delay",
                              "Round-trip delay d of the law (time units)",
                              DoubleValue(1.0),
                              MakeDoubleAccessor(&TcpKelly::m_d),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("ReactToMarks",
                              "Decrease on ECN marks and ignore losses (else on losses)",
                              BooleanValue(false),
                              MakeBooleanAccessor(&TcpKelly::m_marks),
                              MakeBooleanChecker());
        return tid;
    }

    TcpKelly() = default;
    TcpKelly(const TcpKelly& other) = default;

    std::string GetName() const override
    {
        return "TcpKelly";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpKelly>(this);
    }

    void Init(Ptr<TcpSocketState> tcb) override
    {
        if (m_marks)
        {
            tcb->m_useEcn = TcpSocketState::On;
            tcb->m_ecnMode = TcpSocketState::DctcpEcn;
            tcb->m_ectCodePoint = TcpSocketState::Ect0;
        }
    }

    bool HasCongControl() const override
    {
        return true;
    }

    // The per-ACK increment kappa c w d^2 / W of (12)/(13).
    double Increment(double W) const
    {
        double c = m_nu > 0 ? m_nu : 1.0;
        return m_kappa * c * m_weight * m_d * m_d / std::max(W, 1.0);
    }

    // The per-signal decrement kappa beta W^nu d^(1 - nu) of (12)/(13).
    double Decrement(double W) const
    {
        return m_kappa * m_beta * std::pow(W, m_nu) * std::pow(m_d, 1.0 - m_nu);
    }

    void CongControl(Ptr<TcpSocketState> tcb,
                     const TcpRateOps::TcpRateConnection& rc,
                     const TcpRateOps::TcpRateSample& rs) override
    {
        uint32_t seg = tcb->m_segmentSize;
        if (!m_started) // the window TCP starts with (set when the connection opens)
        {
            m_w = std::max(1.0, double(tcb->m_cWnd.Get()) / seg);
            m_started = true;
        }
        // one event per ACK, its increment and its mark's decrement both at the window before
        // it (the explicit step of (12)/(13)); a negative acknowledgment likewise
        for (; m_pendingAcks > 0; --m_pendingAcks)
        {
            double change = Increment(m_w);
            if (m_pendingMarks > 0)
            {
                change -= Decrement(m_w);
                --m_pendingMarks;
                ++m_signals;
            }
            m_w = std::max(m_w + change, 1.0);
        }
        for (; m_pendingLosses > 0; --m_pendingLosses)
        {
            m_w = std::max(m_w + Increment(m_w) - Decrement(m_w), 1.0);
            ++m_signals;
        }
        Write(tcb);
    }

    // Told before the socket processes the ACK; CongControl applies it after.
    void AckReceived(bool echo) override
    {
        ++m_pendingAcks;
        if (m_marks && echo)
        {
            ++m_pendingMarks;
        }
    }

    void PacketLost() override
    {
        if (!m_marks)
        {
            ++m_pendingLosses;
        }
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
    }

    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override
    {
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        // TCP sets its window to this after fast recovery: the law's own window
        return std::max<uint32_t>(tcb->m_segmentSize, Rounded(tcb->m_segmentSize));
    }

    double GetWindow() const
    {
        return m_w;
    }

    uint64_t GetSignals() const
    {
        return m_signals;
    }

  private:
    uint32_t Rounded(uint32_t seg) const
    {
        return static_cast<uint32_t>(std::max(1.0, std::floor(m_w + 0.5)) * seg);
    }

    void Write(Ptr<TcpSocketState> tcb)
    {
        tcb->m_cWnd = Rounded(tcb->m_segmentSize);
        tcb->m_cWndInfl = tcb->m_cWnd;
        tcb->m_ssThresh = tcb->m_cWnd; // no slow start: the law has none
    }

    double m_kappa{1.0};
    double m_weight{1.0};
    double m_beta{0.5};
    double m_nu{0.0};
    double m_d{1.0};
    bool m_marks{false};
    bool m_started{false};
    double m_w{1.0};
    uint32_t m_pendingAcks{0};
    uint32_t m_pendingLosses{0};
    uint32_t m_pendingMarks{0};
    uint64_t m_signals{0};
};

NS_OBJECT_ENSURE_REGISTERED(TcpKelly);

class TcpSlidingMode : public TcpCongestionOps
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::TcpSlidingMode")
                .SetParent<TcpCongestionOps>()
                .SetGroupName("Fluidnet")
                .AddConstructor<TcpSlidingMode>()
                .AddAttribute("Alpha",
                              "Slow-start increase alpha (window x (1 + alpha) per RTT)",
                              DoubleValue(1.0),
                              MakeDoubleAccessor(&TcpSlidingMode::m_alpha),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Mu",
                              "Additive increase mu (packets per RTT)",
                              DoubleValue(1.0),
                              MakeDoubleAccessor(&TcpSlidingMode::m_mu),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Beta",
                              "Multiplicative decrease beta on congestion",
                              DoubleValue(0.5),
                              MakeDoubleAccessor(&TcpSlidingMode::m_beta),
                              MakeDoubleChecker<double>(0.0, 1.0))
                .AddAttribute("FixedThreshold",
                              "Fixed slow-start threshold x_s (packets/s; 0: TCP's dynamic one)",
                              DoubleValue(0.0),
                              MakeDoubleAccessor(&TcpSlidingMode::m_fixed),
                              MakeDoubleChecker<double>(0.0));
        return tid;
    }

    TcpSlidingMode() = default;
    TcpSlidingMode(const TcpSlidingMode& other) = default;

    std::string GetName() const override
    {
        return "TcpSlidingMode";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpSlidingMode>(this);
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        double seg = tcb->m_segmentSize;
        double W = (tcb->m_cWnd.Get() + m_carry) / seg;
        for (uint32_t k = 0; k < segmentsAcked; ++k)
        {
            W += PerAck(tcb, W);
        }
        double bytes = std::max(1.0, W) * seg;
        tcb->m_cWnd = static_cast<uint32_t>(bytes);
        m_carry = bytes - tcb->m_cWnd.Get(); // the fraction of a byte the window cannot hold
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        double kept = (1.0 - m_beta) * bytesInFlight;
        return std::max<uint32_t>(2 * tcb->m_segmentSize, static_cast<uint32_t>(kept));
    }

  protected:
    // Whether the window W (packets) is in slow start.
    bool InSlowStart(Ptr<TcpSocketState> tcb, double W) const
    {
        if (m_fixed > 0)
        {
            double rtt = tcb->m_srtt.Get().GetSeconds();
            return rtt > 0 && W < m_fixed * rtt;
        }
        return W < double(tcb->m_ssThresh.Get()) / tcb->m_segmentSize;
    }

    // The window's change for one ACK of a window of W packets without congestion.
    virtual double PerAck(Ptr<TcpSocketState> tcb, double W)
    {
        return InSlowStart(tcb, W) ? m_alpha : m_mu / W;
    }

    double m_alpha{1.0};
    double m_mu{1.0};
    double m_beta{0.5};
    double m_fixed{0.0};
    double m_carry{0.0};
};

NS_OBJECT_ENSURE_REGISTERED(TcpSlidingMode);

class TcpMrg : public TcpSlidingMode
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::TcpMrg")
                .SetParent<TcpSlidingMode>()
                .SetGroupName("Fluidnet")
                .AddConstructor<TcpMrg>()
                .AddAttribute("Theta",
                              "Target minimum rate Theta (packets/s)",
                              DoubleValue(0.0),
                              MakeDoubleAccessor(&TcpMrg::m_theta),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("RMax",
                              "Factor r^m_max on the increase below Theta",
                              DoubleValue(1.0),
                              MakeDoubleAccessor(&TcpMrg::m_r),
                              MakeDoubleChecker<double>(0.0));
        return tid;
    }

    TcpMrg() = default;
    TcpMrg(const TcpMrg& other) = default;

    std::string GetName() const override
    {
        return "TcpMrg";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpMrg>(this);
    }

  protected:
    double PerAck(Ptr<TcpSocketState> tcb, double W) override
    {
        double rtt = tcb->m_srtt.Get().GetSeconds();
        bool below = rtt > 0 && W / rtt < m_theta;
        if (!below)
        {
            return TcpSlidingMode::PerAck(tcb, W);
        }
        if (InSlowStart(tcb, W))
        {
            return m_r * (m_alpha + m_beta) - m_beta;
        }
        return (m_r - 1.0) * m_beta + m_r * m_mu / W;
    }

  private:
    double m_theta{0.0};
    double m_r{1.0};
};

NS_OBJECT_ENSURE_REGISTERED(TcpMrg);

} // namespace fluidnet
